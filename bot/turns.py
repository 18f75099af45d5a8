"""Turn timers, computer players and lobby expiry for every game's tables.

Deadlines live in the table's stored ``extra`` so they survive restarts; one asyncio task
per table sleeps until the next thing is due (a computer's move, the half-time ping, the
deadline, the lobby's expiry) and re-checks the table under its lock before acting.
"""

from __future__ import annotations

import asyncio
import logging
import random
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

import discord

from bot.ai import Level
from bot.i18n import t
from bot.storage import TableRecord

if TYPE_CHECKING:
    from bot.table import Tables

log = logging.getLogger(__name__)

BOT_DELAY = 2.0  # seconds a computer "thinks" so people can follow its moves
LOBBY_TTL = 15 * 60  # a lobby not started within 15 minutes closes itself
DEFAULT_TURN_SECONDS = 60
TIMEOUTS_BEFORE_TAKEOVER = 3
LEVELS = tuple(level.value for level in Level)


def now() -> float:
    """The current time as a Unix timestamp (virtual under SimCord)."""
    return discord.utils.utcnow().timestamp()


def is_computer_id(player: str | int) -> bool:
    """Computer seats have negative ids; people have their Discord ids."""
    return int(player) < 0


def away_players(record: TableRecord) -> list[str]:
    """Players whose seat a computer plays after repeated timeouts, until 'I'm back'."""
    return record.extra.setdefault("away", [])


def plays_itself(record: TableRecord, player: str) -> bool:
    """Whether a computer makes this seat's moves right now."""
    return is_computer_id(player) or player in record.extra.get("away", [])


def computer_level(record: TableRecord, player: str) -> str:
    """The level of a computer seat; normal for a seat taken over from an absent player."""
    return record.extra.get("bots", {}).get(player, Level.NORMAL.value)


class Autoplay:
    """Mixed into the table cog: schedules computer moves, turn timers and lobby expiry."""

    tables: Tables
    engines: dict[int, Any]
    timers: dict[int, asyncio.Task[None]]  # the one pending task per table
    bot: Any
    game: str

    # -- provided by the game ---------------------------------------------------------

    @abstractmethod
    def acting_players(self, engine: Any) -> list[str]:
        """Who may act now (several during simultaneous bidding)."""

    @abstractmethod
    def computer_action(self, engine: Any, player: str, level: str, rng: random.Random) -> Any:
        """A computer's choice from ``player``'s own view only."""

    @abstractmethod
    def apply_action(
        self, record: TableRecord, engine: Any, player: str, action: Any
    ) -> tuple[str, list[Any]]:
        """Apply a validated action; return its log text and the DMs it causes."""

    # -- turn stamps --------------------------------------------------------------------

    def turn_seconds(self, record: TableRecord) -> int:
        """The table's time per turn."""
        return int(record.options.get("turn_seconds", DEFAULT_TURN_SECONDS))

    def stamp_turn(self, record: TableRecord, engine: Any) -> None:
        """Set the deadline of the turn that begins now (none while computers act)."""
        humans = [p for p in self.acting_players(engine) if not plays_itself(record, p)]
        if engine.is_over or not humans:
            record.extra.pop("turn", None)
            return
        record.extra["turn"] = {
            "move": engine.move_number,
            "deadline": now() + self.turn_seconds(record),
            "pinged": False,
        }

    # -- scheduling -----------------------------------------------------------------------

    def cancel_timer(self, record: TableRecord) -> None:
        """Stop whatever was scheduled for a table."""
        task = self.timers.pop(record.id or 0, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def schedule(self, record: TableRecord) -> None:
        """(Re)plan the next timed event of a table after any change."""
        assert record.id is not None
        self.cancel_timer(record)
        if record.status == "lobby":
            due = float(record.extra.get("opened_at", now())) + LOBBY_TTL
            job = self._expire_lobby(record.id, due)
        elif record.status == "running" and record.id in self.engines:
            engine = self.engines[record.id]
            computers = [p for p in self.acting_players(engine) if plays_itself(record, p)]
            if computers:
                job = self._computer_turn(record.id, engine.move_number)
            elif "turn" in record.extra:
                job = self._turn_clock(record.id)
            else:
                return
        else:
            return
        self.timers[record.id] = asyncio.create_task(job, name=f"{self.game}-{record.id}")

    async def _sleep_until(self, due: float) -> None:
        await self.bot.wait_until_ready()
        delay = due - now()
        if delay > 0:
            await asyncio.sleep(delay)

    async def _guarded(self, table_id: int, what: str, job: Any) -> None:
        try:
            await job
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s failed on %s table %s", what, self.game, table_id)

    # -- computer players -------------------------------------------------------------

    async def _computer_turn(self, table_id: int, move: int) -> None:
        await self._sleep_until(now() + BOT_DELAY)
        await self._guarded(table_id, "computer move", self._play_computers(table_id, move))

    async def _play_computers(self, table_id: int, move: int) -> None:
        record = self.tables.get(table_id)
        if record is None:
            return
        letters: list[Any] = []
        async with self.tables.lock(record.channel_id):
            engine = self.engines.get(table_id)
            if engine is None or engine.move_number != move or record.status != "running":
                return
            for player in self.acting_players(engine):
                if plays_itself(record, player):
                    letters += await self._auto_move(record, engine, player, notice=None)
                    break  # one move per delay, so people can follow
            self.schedule(record)
        await self.deliver(record, letters)

    async def _auto_move(
        self, record: TableRecord, engine: Any, player: str, *, notice: list[Any] | None
    ) -> list[Any]:
        level = computer_level(record, player)
        rng = random.Random(f"{record.id}:{engine.move_number}:{player}")
        if level == Level.HARD.value:
            # Up to a quarter second of search: keep the event loop free for other tables.
            action = await asyncio.to_thread(self.computer_action, engine, player, level, rng)
        else:
            action = self.computer_action(engine, player, level, rng)
        text, letters = self.apply_action(record, engine, player, action)
        if notice is not None:
            record.extra["notice"] = notice
        else:
            record.extra.pop("notice", None)
        await self.commit(record, engine, player, text, by_human=False)
        await self.edit_table_message(record, **self.publish(record, engine))
        return letters

    # -- turn timers --------------------------------------------------------------------

    async def _turn_clock(self, table_id: int) -> None:
        record = self.tables.get(table_id)
        if record is None or "turn" not in record.extra:
            return
        turn = dict(record.extra["turn"])
        half = turn["deadline"] - self.turn_seconds(record) / 2
        if not turn.get("pinged") and now() < half:
            await self._sleep_until(half)
            await self._guarded(table_id, "turn ping", self._ping(table_id, turn["move"]))
        await self._sleep_until(turn["deadline"])
        await self._guarded(table_id, "turn timeout", self._timeout(table_id, turn["move"]))

    async def _ping(self, table_id: int, move: int) -> None:
        record = self.tables.get(table_id)
        if record is None:
            return
        async with self.tables.lock(record.channel_id):
            engine = self.engines.get(table_id)
            turn = record.extra.get("turn")
            if engine is None or turn is None or turn["move"] != move or turn.get("pinged"):
                return
            humans = [p for p in self.acting_players(engine) if not plays_itself(record, p)]
            turn["pinged"] = True
            await self.tables.save(record)
        channel = self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)
        mentions = ", ".join(f"<@{p}>" for p in humans)
        deadline = int(turn["deadline"])
        try:
            await channel.send(
                t("table.ping", self.table_locale(record), players=mentions, deadline=deadline),
                allowed_mentions=discord.AllowedMentions(users=True),
            )
        except discord.HTTPException:
            log.warning("could not ping on %s table %s", self.game, table_id, exc_info=True)

    async def _timeout(self, table_id: int, move: int) -> None:
        record = self.tables.get(table_id)
        if record is None:
            return
        letters: list[Any] = []
        async with self.tables.lock(record.channel_id):
            engine = self.engines.get(table_id)
            turn = record.extra.get("turn")
            if engine is None or turn is None or turn["move"] != move:
                return
            timeouts: dict[str, int] = record.extra.setdefault("timeouts", {})
            for player in self.acting_players(engine):
                if plays_itself(record, player) or engine.is_over:
                    continue
                timeouts[player] = timeouts.get(player, 0) + 1
                if timeouts[player] >= TIMEOUTS_BEFORE_TAKEOVER:
                    away_players(record).append(player)
                notice = ["table.timed_out", {"player": player}]
                letters += await self._auto_move(record, engine, player, notice=notice)
            self.schedule(record)
        await self.deliver(record, letters)

    # -- lobby expiry -------------------------------------------------------------------

    async def _expire_lobby(self, table_id: int, due: float) -> None:
        await self._sleep_until(due)
        await self._guarded(table_id, "lobby expiry", self._close_expired(table_id))

    async def _close_expired(self, table_id: int) -> None:
        record = self.tables.get(table_id)
        if record is None:
            return
        async with self.tables.lock(record.channel_id):
            if record.status != "lobby":
                return
            record.status = "cancelled"
            record.extra["expired"] = True
            await self.tables.save(record)
        await self.edit_table_message(
            record,
            embed=self.closed_embed(record, self.table_locale(record), by=0),
            view=None,
        )

    # -- provided by the table cog ------------------------------------------------------

    async def commit(
        self, record: TableRecord, engine: Any, player: str, action: str, *, by_human: bool = True
    ) -> None:
        """See GameTableCog.commit."""
        raise NotImplementedError

    def publish(self, record: TableRecord, engine: Any) -> dict[str, Any]:
        """See GameTableCog.publish."""
        raise NotImplementedError

    async def edit_table_message(self, record: TableRecord, **fields: Any) -> None:
        """See GameTableCog.edit_table_message."""
        raise NotImplementedError

    async def deliver(self, record: TableRecord, letters: list[Any]) -> None:
        """See GameTableCog.deliver."""
        raise NotImplementedError

    def closed_embed(self, record: TableRecord, locale: object, *, by: int) -> discord.Embed:
        """See GameTableCog.closed_embed."""
        raise NotImplementedError

    def table_locale(self, record: TableRecord, interaction: Any = None) -> object:
        """See GameTableCog.table_locale."""
        raise NotImplementedError
