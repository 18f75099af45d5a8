"""Answering interactions: privately, within Discord's 3-second window, errors in one place."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import time
import weakref
from collections.abc import Callable, Coroutine, Iterator
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import discord
from discord.enums import InteractionResponseType
from discord.http import MultipartParameters, Route
from discord.utils import MISSING
from discord.webhook.async_ import async_context, interaction_message_response_params

from bot import metrics
from bot.i18n import t
from bot.table.errors import UserError, localize
from bot.table.session import CLICK_BUDGET

log = logging.getLogger(__name__)
P = ParamSpec("P")
S = TypeVar("S")

# When the click this task handles reached the bot (None outside a click): an answer sent
# without a `Reply` (the error handler's) is timed from it for the click histogram too.
_click_arrived: ContextVar[float | None] = ContextVar("click_arrived", default=None)


@contextlib.contextmanager
def timing_click() -> Iterator[None]:
    """Handle one click within: its first answer sent by `reply_ephemeral` is timed."""
    token = _click_arrived.set(time.perf_counter())
    try:
        yield
    finally:
        _click_arrived.reset(token)


# How much sooner than usual the clicks handled in this task must be answered: a click
# handed over by another process (bot.client.handoff) reached Discord's clock that long
# before it reached this one.
_answer_sooner: ContextVar[float] = ContextVar("answer_sooner", default=0.0)


@contextlib.contextmanager
def answering_sooner(seconds: float) -> Iterator[None]:
    """Within: every `Reply` defers (and gives up a change) ``seconds`` sooner."""
    token = _answer_sooner.set(max(seconds, 0.0))
    try:
        yield
    finally:
        _answer_sooner.reset(token)


def click_answered() -> None:
    """The click this task handles just got its first answer outside a `Reply` (which
    times its own): time it, once."""
    arrived = _click_arrived.get()
    if arrived is not None:
        _click_arrived.set(None)
        metrics.answered(time.perf_counter() - arrived)


async def reply_ephemeral(
    interaction: discord.Interaction, content: str, *, embed: discord.Embed | None = None
) -> None:
    """Answer privately, whether or not the interaction was already answered."""
    extra: dict[str, Any] = {} if embed is None else {"embed": embed}
    if interaction.response.is_done():
        await interaction.followup.send(content, ephemeral=True, **extra)
    else:
        await interaction.response.send_message(content, ephemeral=True, **extra)
        click_answered()


async def answer_error(
    interaction: discord.Interaction, error: BaseException, *, context: str = ""
) -> None:
    """The one place errors are answered: user errors explained, others apologised and logged.

    Call it from the ``except`` block that caught ``error``: unexpected errors go on to the
    client's ``on_error``, which logs the traceback with the context.
    """
    if isinstance(error, UserError):
        params = localize(error.params, interaction.locale)
        await reply_ephemeral(interaction, t(error.key, interaction.locale, **params))
        if error.__cause__ is not None and not isinstance(error.__cause__, UserError):
            # An apology for a failed save: the cause was logged where it happened.
            log.info("answered %s after %r (%s)", error.key, error.__cause__, context)
        return
    try:
        await reply_ephemeral(interaction, t("error.unexpected", interaction.locale))
    except discord.HTTPException:
        log.warning("could not send the apology (%s)", context)
    where = (
        f"{context or 'an interaction'} (user {interaction.user.id}, "
        f"channel {interaction.channel_id})"
    )
    await interaction.client.on_error(where)


def answers_user_errors(
    func: Callable[Concatenate[S, discord.Interaction, P], Coroutine[Any, Any, Any]],
) -> Callable[Concatenate[S, discord.Interaction, P], Coroutine[Any, Any, None]]:
    """Answer a command's UserError ephemerally; real errors still reach the error handler."""

    @functools.wraps(func)
    async def wrapper(
        self: S, interaction: discord.Interaction, *args: P.args, **kwargs: P.kwargs
    ) -> None:
        try:
            await func(self, interaction, *args, **kwargs)
        except UserError as error:
            await answer_error(interaction, error)

    # discord.py reads option types from the annotations in the wrapper's module; resolve
    # them where the command was written instead.
    wrapper.__signature__ = inspect.signature(func, eval_str=True)  # type: ignore[attr-defined]
    return wrapper


# What update_message sends itself; anything else (delete_after...) takes edit_message.
_PLAIN_UPDATE = frozenset(("content", "embed", "embeds", "attachments", "view", "allowed_mentions"))


def message_update_params(
    fields: dict[str, Any], previous_allowed_mentions: discord.AllowedMentions | None
) -> MultipartParameters:
    """The callback that edits a clicked message to these fields, as discord.py writes it
    (its payload, or its multipart form with the files to upload)."""
    return interaction_message_response_params(
        type=InteractionResponseType.message_update.value,
        content=fields.get("content", MISSING),
        embed=fields.get("embed", MISSING),
        embeds=fields.get("embeds", MISSING),
        view=fields.get("view", MISSING),
        attachments=fields.get("attachments", MISSING),
        previous_allowed_mentions=previous_allowed_mentions,
        allowed_mentions=fields.get("allowed_mentions", MISSING),
    )


# A click's answer runs under its table's lock. Discord refuses a first answer after 3
# seconds, so one still unanswered after this long has failed: give up rather than hold the
# table through the adapter's backoff (25 s in all; the publisher then edits the message).
CALLBACK_TIMEOUT = 10.0


async def update_message(interaction: discord.Interaction, **fields: Any) -> None:
    """Answer a component click by editing its message: discord.py's ``edit_message``
    without asking Discord for the edited message back.

    ``edit_message`` posts the callback with ``?with_response=1`` and builds a Message from
    the answer; nothing here reads it, and on a busy table that cost as much as the rest
    of answering (Discord answers the plain callback with 204 and no body). A view that
    discord.py must keep answering (not stopped) goes the full way, which stores it.
    """
    view = fields.get("view", MISSING)
    if (view is not MISSING and view is not None and not view.is_finished()) or not (
        fields.keys() <= _PLAIN_UPDATE
    ):
        await interaction.response.edit_message(**fields)
        return
    state = interaction._state
    params = message_update_params(fields, state.allowed_mentions)
    http = state.http
    # discord.py's webhook adapter, as edit_message uses it: an interaction's callback is
    # exempt from the global limit and has no bucket of its own to share.
    route = Route(
        "POST",
        "/interactions/{webhook_id}/{webhook_token}/callback",
        webhook_id=interaction.id,
        webhook_token=interaction.token,
    )
    async with asyncio.timeout(CALLBACK_TIMEOUT):
        await async_context.get().request(
            route,
            session=interaction._session,
            proxy=http.proxy,
            proxy_auth=http.proxy_auth,
            payload=None if params.files else params.payload,
            multipart=params.multipart if params.files else None,
            files=params.files or None,
        )
    # Answered: later replies to this click must be follow-ups, as after edit_message.
    interaction.response._response_type = InteractionResponseType.message_update


def release(interaction: discord.Interaction) -> None:
    """Break discord.py's Interaction <-> InteractionResponse cycle once a click is handled.

    Each of the two holds the other, so an answered click (its Member, User, Message and
    their lists: some 25 objects) is freed by the cyclic collector, never by reference
    counting: at a thousand clicks a second that was most of what the collector walked.
    The response keeps its state (`is_done()` stays true); only its way back is cut.
    """
    response = getattr(interaction, "_cs_response", None)
    if response is not None:
        response._parent = None


# Discord wants an answer within 3 seconds; a click still working after this long is
# deferred, and its message edited once the work is done.
ANSWER_WITHIN = 2.0
# The least time a click handed over late is given before it is deferred.
MIN_WITHIN = 0.1
# Clicks that start answering within this span share one timer: a click is deferred after
# between ANSWER_WITHIN - SHARED_SPAN and ANSWER_WITHIN seconds.
SHARED_SPAN = 0.2


class _Watch:
    """Replies that started within one short span, and the one timer that defers the slow.

    A loop timer per click costs a heap push and a pop of Python-compared handles among
    the thousands that are pending under load; shared, it is a set insertion. A watch left
    with no replies cancels its timer, so nothing stays scheduled once clicks are done.
    """

    __slots__ = ("closes_at", "handle", "replies", "within")

    def __init__(self, loop: asyncio.AbstractEventLoop, within: float, span: float) -> None:
        now = loop.time()
        self.within = within
        self.closes_at = now + span  # replies start joining another watch after this
        self.replies: set[Reply] = set()
        self.handle: asyncio.TimerHandle | None = loop.call_at(now + within, self._fire)

    def _fire(self) -> None:
        self.handle = None
        replies, self.replies = self.replies, set()
        for reply in replies:
            reply._when_slow()

    def leave(self, reply: Reply) -> None:
        """A reply is answered or done: no longer to be deferred."""
        self.replies.discard(reply)
        if not self.replies and self.handle is not None:
            self.handle.cancel()
            self.handle = None


# The watch new replies join, per event loop (tests run many loops).
_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watch] = weakref.WeakKeyDictionary()


def _watch_for(within: float) -> _Watch:
    """A watch for a reply starting now: the open shared one, or a new one."""
    loop = asyncio.get_running_loop()
    if within != ANSWER_WITHIN:
        return _Watch(loop, within, 0.0)  # its own timer
    watch = _watches.get(loop)
    if (
        watch is None
        or watch.handle is None
        or watch.within != within
        or watch.closes_at < loop.time()
    ):
        watch = _watches[loop] = _Watch(loop, within, SHARED_SPAN)
    return watch


class Reply:
    """One click's answer: deferred if the work is slow, then the message edited once.

    Use as ``async with Reply(interaction) as reply:``; `edit` and `send` work whether or
    not the click was deferred meanwhile.
    """

    __slots__ = ("_answering", "_arrived", "_defer", "_watch", "deadline", "interaction", "within")

    def __init__(self, interaction: discord.Interaction, *, within: float | None = None) -> None:
        self.interaction = interaction
        sooner = _answer_sooner.get()
        # A handed click: its time on Discord's clock began before it arrived here.
        self.within = max((ANSWER_WITHIN if within is None else within) - sooner, MIN_WITHIN)
        # When the final answer is due (the loop's clock): a change made for this click
        # that could not be answered by then is refused at once (TableSession.change).
        self.deadline = asyncio.get_running_loop().time() + CLICK_BUDGET - sooner
        # A shared timer, not a sleeping task: nothing waits on it unless it fires.
        self._watch: _Watch | None = None
        self._defer: asyncio.Task[None] | None = None
        self._answering = False  # an answer is on its way: a late timer must not defer
        self._arrived = time.perf_counter()  # for the click answer histogram

    async def __aenter__(self) -> Reply:
        watch = self._watch = _watch_for(self.within)
        watch.replies.add(self)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self._settle()

    def _when_slow(self) -> None:
        self._watch = None
        if not self._answering and not self.interaction.response.is_done():
            log.info("deferring a slow answer (interaction %s)", self.interaction.id)
            self._defer = asyncio.get_running_loop().create_task(self._send_defer())

    async def _send_defer(self) -> None:
        if self.interaction.type is discord.InteractionType.component:
            await self.interaction.response.defer()  # then the message is edited
        else:
            await self.interaction.response.defer(ephemeral=True, thinking=True)
        metrics.answered(time.perf_counter() - self._arrived)

    async def _settle(self) -> None:
        """Leave the watch; if a defer is on its way, let it complete first."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.leave(self)
        defer, self._defer = self._defer, None
        if defer is not None:
            await defer

    async def edit(self, **fields: Any) -> bool:
        """Edit the message the component is on (the click's answer); True when done."""
        self._answering = True
        await self._settle()
        if self.interaction.response.is_done():
            await self.interaction.edit_original_response(**fields)
            return True
        if self.interaction.type is discord.InteractionType.component:
            await update_message(self.interaction, **fields)
        else:
            await self.interaction.response.edit_message(**fields)
        metrics.answered(time.perf_counter() - self._arrived)
        return True

    async def send(self, content: str, **fields: Any) -> None:
        """Answer privately (a new ephemeral message)."""
        self._answering = True
        await self._settle()
        if self.interaction.response.is_done():
            await self.interaction.followup.send(content, ephemeral=True, **fields)
        else:
            await self.interaction.response.send_message(content, ephemeral=True, **fields)
            metrics.answered(time.perf_counter() - self._arrived)
