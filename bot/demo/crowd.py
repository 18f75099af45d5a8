"""Simulated people (--players N): they join the viewer's lobbies and play by clicking the
same buttons a person would, choosing as the normal computer level does."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from simcord.actors import MemberActor

from bot.ai.levels import Level
from bot.demo.world import World, button_id
from bot.table import timers
from bot.table.session import TableSession

log = logging.getLogger(__name__)
# How often the crowd looks at the tables (real seconds): quick enough to feel live.
LOOK_EVERY = 0.25


class Crowd:
    """The simulated people of one demo, and the task that plays for them."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.by_id = {str(person.id): person for person in world.people}
        # When each person first saw their turn: they answer after a computer's delay.
        self._seen: dict[tuple[int, int, str], float] = {}
        self._memory: dict[tuple[int, str], Any] = {}

    async def run(self) -> None:
        """Look at every demo table in turn, forever (cancelled when the demo ends)."""
        if not self.by_id:
            return
        while True:
            for channel in self.world.channels.values():
                session = await self.world.bot.tables.load_in_channel(channel.id)
                if session is None:
                    continue
                try:
                    await self.step(session)
                except Exception:
                    # One bad step must not end the crowd: the person tries again.
                    log.warning("a simulated player's move failed", exc_info=True)
            await asyncio.sleep(LOOK_EVERY)

    async def step(self, session: TableSession) -> None:
        """Join a lobby, or make the move that is due at a running table."""
        if session.status == "lobby":
            await self.join(session)
        elif session.status == "running":
            for player in session.acting_players():
                person = self.by_id.get(player)
                if person is not None and self.due(session, player):
                    await self.move(session, person, player)
                    return

    async def join(self, session: TableSession) -> None:
        """Seat everyone who is not seated yet, while there is room."""
        record = session.record
        for person in self.world.people:
            if person.id in record.seats or len(record.seats) >= session.spec.max_players:
                continue

            async def click(person: MemberActor = person) -> None:
                message = self.world.table_message(record)
                join = button_id(message.components, "join")
                if join is not None and person.id not in session.record.seats:
                    await person.click(message, custom_id=join)

            await self.world.operation(click)

    def due(self, session: TableSession, player: str) -> bool:
        """Whether this person has 'thought' for as long as a computer would."""
        move = session.running_engine().move_number
        now = asyncio.get_running_loop().time()
        seen = self._seen.setdefault((session.id, move, player), now)
        return now - seen >= timers.BOT_DELAY

    async def move(self, session: TableSession, person: MemberActor, player: str) -> None:
        """Choose as the normal level would and click the button(s) for it."""
        view = session.player_view(player)
        memory = self._memory.setdefault((session.id, player), session.spec.new_memory())
        seed = f"{session.id}:{view.move_number}:{player}"
        action = session.spec.choose(view, Level.NORMAL.value, random.Random(seed), memory)
        code = session.spec.encode_action(action)
        if session.spec.name == "nothanks":
            await self.world.operation(lambda: self.click_table(session, person, code))
        else:
            await self.world.operation(lambda: self.play_rage(session, person, view, code))

    async def click_table(self, session: TableSession, person: MemberActor, code: str) -> None:
        """No Thanks!: Take or No thanks! on the table message."""
        message = self.world.table_message(session.record)
        custom_id = button_id(message.components, "take" if code == "take" else "pass")
        if custom_id is not None:
            await person.click(message, custom_id=custom_id)

    async def play_rage(
        self, session: TableSession, person: MemberActor, view: Any, code: str
    ) -> None:
        """Rage: open the private panel, then bid, or play a card (and a Joker's colour)."""
        table = self.world.table_message(session.record)
        hand = button_id(table.components, "hand")
        if hand is None:
            return
        panel = await person.click(table, custom_id=hand)
        shown = panel.response
        if shown is None:
            return
        kind, _, rest = code.partition(" ")
        if kind == "bid":
            custom_id = button_id(shown.components, "bid", f"{view.round}_{rest}")
            if custom_id is not None:
                await person.click(shown.message, custom_id=custom_id)
            return
        card, _, colour = rest.partition(" ")
        custom_id = button_id(shown.components, "play", card)
        if custom_id is None:
            return
        played = await person.click(shown.message, custom_id=custom_id)
        if colour and played.response is not None:
            choice = button_id(played.response.components, "joker", colour)
            if choice is not None:
                await person.click(played.response.message, custom_id=choice)
