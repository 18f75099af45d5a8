"""Publishing: what a change shows on Discord, split by job.

- `tables`: the public table message, edited "latest state wins";
- `pictures`: the table's picture, painted once per state and uploaded when it changed;
- `dms`: players' DMs and the living DM edited in place;
- `pings`: turn pings (at a turn's start, at half time) and their deletion;
- `notices`: the "your turn" DMs of turn-based tables, with the move's buttons;
- `threads`: the thread a table opens in, and archiving it when the table closes.

`DiscordPublisher` ties them together as the table core's `Publisher`
(bot.table.tables); it needs only a `Host` (bot.client.publishing.host), not the bot class.
Everything it sends outside an interaction's answer goes through one outbound `Lane`
(bot.client.outbound.lane): paced below Discord's global limit, by priority, the latest
state of each message winning.

Usage::

    publisher = DiscordPublisher(bot, Lane(rate=45.0))
    bot.tables.publisher = publisher
    publisher.refresh(session)  # the table's message is edited soon
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.client.outbound.lane import Lane
from bot.client.publishing.dms import PlayerDms
from bot.client.publishing.host import Host
from bot.client.publishing.notices import TurnNotices
from bot.client.publishing.pictures import Pictures, TablePicture
from bot.client.publishing.pings import TurnPings
from bot.client.publishing.tables import TableMessages
from bot.client.publishing.threads import TableThreads
from bot.storage import BrokenRow
from bot.table.session import TableSession
from bot.table.spec import Letter


class DiscordPublisher:
    """Shows tables on Discord for the table core: its message, pictures, DMs and pings."""

    def __init__(self, host: Host, lane: Lane | None = None) -> None:
        self.lane = Lane() if lane is None else lane
        self.pictures = Pictures()
        self.tables = TableMessages(host, self.pictures, self.lane)
        self.dms = PlayerDms(host, self.lane)
        self.pings = TurnPings(host, self.lane, locale_of=self.tables.table_locale)
        self.threads = TableThreads(host, self.lane)
        self.notices = TurnNotices(host, self.lane, self.dms)

    def refresh(self, session: TableSession) -> None:
        """Bring the table's public message up to date soon (latest state wins)."""
        self.tables.refresh(session)

    def deliver(self, session: TableSession, letters: Sequence[Letter]) -> None:
        """Queue the DMs a change caused (never to computers or to closed DMs)."""
        self.dms.deliver(session, letters)

    async def ping(self, session: TableSession, players: Sequence[str], deadline: float) -> None:
        """Remind the people whose turn it is, once, at half time (queued, not waited for)."""
        self.pings.ping(session, players, deadline)

    def close(self) -> None:
        """Stop sending (the bot is shutting down)."""
        self.lane.close()

    def tidy(self, session: TableSession) -> None:
        """After every change: delete a ping whose turn passed, ping a turn that started,
        send or close turn-based tables' "your turn" DMs, archive the thread of a table that
        closed (all soon)."""
        self.pings.tidy(session)
        self.pings.announce(session)
        self.notices.update(session)
        self.threads.closed(session)

    def loaded(self, session: TableSession) -> None:
        """A table was loaded from its row (a restart, the scheduler, a click): send what
        it owes now, a "your turn" notice that was waiting when it was stored, say."""
        self.notices.update(session)

    def show_broken(self, row: BrokenRow) -> None:
        """Tell a quarantined table's channel, on its message, that it could not be restored."""
        self.tables.show_broken(row)


__all__ = ["DiscordPublisher", "Host", "TablePicture"]
