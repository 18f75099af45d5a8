"""Computer players: pure, seeded decision functions that see only their own player view.

The Discord cogs call ``choose_nothanks_action`` and ``choose_rage_action`` with the
view of the seat the computer plays, a difficulty ``Level`` and a ``random.Random``.
Nothing here touches Discord, asyncio or I/O, and nothing reads hidden state.
"""

from bot.ai.levels import Level
from bot.ai.nothanks import choose_nothanks_action
from bot.ai.rage import choose_rage_action
from bot.ai.rage_memory import RageMemory

__all__ = ["Level", "RageMemory", "choose_nothanks_action", "choose_rage_action"]
