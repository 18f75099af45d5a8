"""The lean click path below the interaction layer: the plain callback, the slimmed click."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import aiohttp
import discord
import pytest
from aiohttp import web
from discord.enums import InteractionResponseType
from discord.webhook.async_ import AsyncWebhookAdapter, async_context

from bot.client.replies import update_message
from bot.client.routing import slimming_clicked_messages
from bot.render.components import StaticView
from tests.client.loopback import serve_as_discord


class RecordingAdapter:
    """Stands in for discord.py's webhook adapter: records the requests it is asked for."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def request(self, route: Any, session: Any, **kwargs: Any) -> str:
        """Record one request; Discord answers a plain callback with 204 and no body."""
        self.requests.append({"method": route.method, "url": route.url, **kwargs})
        return ""


class Response:
    """The part of an InteractionResponse the plain callback touches."""

    def __init__(self) -> None:
        self._response_type: InteractionResponseType | None = None
        self.edited: dict[str, Any] | None = None

    def is_done(self) -> bool:
        """Whether the interaction was answered."""
        return self._response_type is not None

    async def edit_message(self, **fields: Any) -> None:
        """discord.py's full answer (taken for what the plain callback does not send)."""
        self.edited = fields
        self._response_type = InteractionResponseType.message_update


def interaction() -> Any:
    """A component interaction with what update_message reads."""
    http = SimpleNamespace(proxy=None, proxy_auth=None, user_agent="DiscordBot (test)")
    state = SimpleNamespace(allowed_mentions=discord.AllowedMentions.none(), http=http)
    return SimpleNamespace(
        id=1234,
        token="tok",
        _session=object(),
        _state=state,
        response=Response(),
        client=SimpleNamespace(),
    )


@pytest.fixture
def adapter() -> Any:
    """The recording adapter in place of discord.py's for the test."""
    recording = RecordingAdapter()
    token = async_context.set(recording)  # type: ignore[arg-type]
    try:
        yield recording
    finally:
        async_context.reset(token)


async def test_the_plain_callback_updates_the_message_and_asks_nothing_back(
    adapter: RecordingAdapter,
) -> None:
    """One POST to the callback, type 7, no ?with_response; the click counts as answered."""
    clicked = interaction()
    embed = discord.Embed(title="No Thanks!", description="🃏 27")
    view = StaticView().add_button("ct:nothanks:1:4:take", label="Take")
    await update_message(
        clicked,
        content="<@5>",
        embed=embed,
        view=view,
        allowed_mentions=discord.AllowedMentions(users=[discord.Object(5)]),
    )
    (request,) = adapter.requests
    assert request["method"] == "POST" and request["url"].endswith(
        "/interactions/1234/tok/callback"
    )
    assert "params" not in request or not request["params"]
    payload = request["payload"]
    assert payload["type"] == InteractionResponseType.message_update.value
    assert payload["data"]["content"] == "<@5>"
    assert payload["data"]["embeds"] == [embed.to_dict()]
    assert payload["data"]["components"] == view.to_components()
    assert payload["data"]["allowed_mentions"]["users"] == [5]
    assert clicked.response.is_done() and clicked.response.edited is None


async def test_a_picture_goes_as_multipart(adapter: RecordingAdapter) -> None:
    """A new attachment is uploaded with the same callback, as a multipart body."""
    clicked = interaction()
    picture = discord.File(__file__, filename="table-picture.png")
    await update_message(clicked, embed=discord.Embed(title="x"), attachments=[picture])
    (request,) = adapter.requests
    assert request["payload"] is None and request["files"] == [picture]
    assert request["multipart"][0]["name"] == "payload_json"


async def test_a_view_discord_py_must_keep_takes_the_full_answer(
    adapter: RecordingAdapter,
) -> None:
    """A live View (not stopped) is stored by edit_message, so it goes that way; so does an
    option the plain callback does not send."""
    clicked = interaction()
    live = discord.ui.View(timeout=None)
    live.add_item(discord.ui.Button(label="x", custom_id="other"))
    await update_message(clicked, view=live)
    assert adapter.requests == [] and clicked.response.edited == {"view": live}
    again = interaction()
    await update_message(again, content="x", delete_after=5.0)
    assert adapter.requests == [] and again.response.edited == {"content": "x", "delete_after": 5.0}


def click(custom_id: str, **data: Any) -> dict[str, Any]:
    """An INTERACTION_CREATE payload of a component click on a message with contents."""
    return {
        "type": 3,
        "data": {"custom_id": custom_id, "component_type": 2, **data},
        "message": {
            "id": "77",
            "flags": 64,
            "content": "hi",
            "embeds": [{"title": "big"}],
            "components": [{"type": 1, "components": []}],
            "attachments": [{"id": "1"}],
        },
    }


def test_a_table_click_reaches_discord_py_without_the_messages_contents() -> None:
    """Its message keeps its id, flags and text; the embeds, components and attachments go."""
    seen: list[dict[str, Any]] = []
    parse = slimming_clicked_messages(seen.append)
    for custom_id in ("ct:nothanks:1:4:take", "selct:rage:2:0:bid"):
        parse(click(custom_id))
        message = seen[-1]["message"]
        assert (message["id"], message["flags"], message["content"]) == ("77", 64, "hi")
        assert message["embeds"] == message["components"] == message["attachments"] == []


def test_other_interactions_reach_discord_py_as_they_came() -> None:
    """Another bot's component, a replay button and a slash command are left whole."""
    seen: list[dict[str, Any]] = []
    parse = slimming_clicked_messages(seen.append)
    for payload in (click("rp:1:2:n"), click("someone-else"), {"type": 2, "data": {"name": "x"}}):
        parse(payload)
        assert seen[-1] == payload
        if "message" in payload:
            assert payload["message"]["embeds"] == [{"title": "big"}]


# -- the callback on the wire (discord.py's own adapter in place) ---------------------------


class CallbackServer:
    """A loopback HTTP server answering interaction callbacks with the statuses it is given."""

    def __init__(self, answers: list[tuple[int, dict[str, Any] | None, dict[str, str]]]) -> None:
        self.answers = answers
        self.seen: list[tuple[str, str, bytes]] = []
        self.delay = 0.0  # seconds before each answer

    async def callback(self, request: web.Request) -> web.Response:
        """Record the request; answer with the next status (204 once they run out)."""
        self.seen.append((request.method, request.path_qs, await request.read()))
        await asyncio.sleep(self.delay)
        status, body, headers = self.answers.pop(0) if self.answers else (204, None, {})
        if body is None:
            return web.Response(status=status, headers=headers)
        # Exactly application/json, as Discord answers: discord.py parses nothing else.
        headers = {"Content-Type": "application/json", **headers}
        return web.Response(body=json.dumps(body).encode(), status=status, headers=headers)


@pytest.fixture
async def wire(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Callable[..., Any]]:
    """Start a CallbackServer, point discord.py's routes at it; yields a maker of both."""
    runners: list[web.AppRunner] = []
    sessions: list[aiohttp.ClientSession] = []

    async def make(*answers: tuple[int, dict[str, Any] | None, dict[str, str]]) -> Any:
        server = CallbackServer(list(answers))
        app = web.Application()
        app.router.add_post("/api/v10/interactions/{id}/{token}/callback", server.callback)
        runner, _ = await serve_as_discord(app, monkeypatch)
        runners.append(runner)
        clicked = interaction()
        clicked._session = aiohttp.ClientSession()
        sessions.append(clicked._session)
        return server, clicked

    token = async_context.set(AsyncWebhookAdapter())
    try:
        yield make
    finally:
        async_context.reset(token)
        for session in sessions:
            await session.close()
        for runner in runners:
            await runner.cleanup()


async def test_the_callback_goes_straight_to_discord(wire: Callable[..., Any]) -> None:
    """With discord.py's adapter, one POST of the JSON payload to the callback URL (the token
    quoted), nothing asked back; the click counts as answered."""
    server, clicked = await wire()
    clicked.token = "a/b c"
    embed = discord.Embed(title="No Thanks!", description="🃏 27")
    view = StaticView().add_button("ct:nothanks:1:4:take", label="Take")
    await update_message(clicked, embed=embed, view=view)
    ((method, path, body),) = server.seen
    assert method == "POST" and path == "/api/v10/interactions/1234/a%2Fb%20c/callback"
    payload = json.loads(body)
    assert payload["type"] == InteractionResponseType.message_update.value
    assert payload["data"]["embeds"] == [embed.to_dict()]
    assert payload["data"]["components"] == view.to_components()
    assert payload["data"]["allowed_mentions"] == {"parse": []}
    assert clicked.response.is_done()


async def test_a_rate_limited_callback_is_retried(wire: Callable[..., Any]) -> None:
    """Discord's 429 is waited out (its body's retry_after) and the same callback sent
    again, as discord.py's adapter does."""
    limited = (429, {"retry_after": 0.01, "message": "slow"}, {"Via": "1.1 google"})
    server, clicked = await wire(limited)
    await update_message(clicked, content="x")
    assert len(server.seen) == 2 and len({body for _, _, body in server.seen}) == 1
    assert clicked.response.is_done()


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ((404, {"message": "Unknown interaction", "code": 10062}, {}), discord.NotFound),
        ((403, {"message": "Missing Access", "code": 50001}, {}), discord.Forbidden),
        ((400, {"message": "Invalid Form Body", "code": 50035}, {}), discord.HTTPException),
        ((429, {"message": "banned"}, {}), discord.HTTPException),  # Cloudflare's: no Via
    ],
    ids=["404", "403", "400", "429-cloudflare"],
)
async def test_a_refused_callback_raises_discord_pys_error(
    wire: Callable[..., Any], answer: tuple[int, dict[str, Any], dict[str, str]], error: type
) -> None:
    """A refusal is raised once, as the error discord.py raises; the click is not answered."""
    server, clicked = await wire(answer)
    with pytest.raises(error) as raised:
        await update_message(clicked, content="x")
    assert raised.type is error and raised.value.status == answer[0]
    assert len(server.seen) == 1 and not clicked.response.is_done()


async def test_a_callback_that_hangs_gives_up_and_frees_the_table(
    wire: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A callback unanswered past its timeout raises (the table's lock is not held for the
    session's five minutes); the click is not marked answered."""
    monkeypatch.setattr("bot.client.replies.CALLBACK_TIMEOUT", 0.05)
    server, clicked = await wire()
    server.delay = 1.0
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(asyncio.TimeoutError):
        await update_message(clicked, content="x")
    assert loop.time() - started < 0.5
    assert len(server.seen) == 1 and not clicked.response.is_done()


@pytest.mark.parametrize(
    "answer",
    [(503, {"message": "unavailable"}, {}), (429, {"retry_after": 5.0}, {"Via": "1.1 google"})],
    ids=["5xx", "429"],
)
async def test_retries_stop_once_the_answer_window_is_past(
    wire: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    answer: tuple[int, dict[str, Any], dict[str, str]],
) -> None:
    """A retry that would end past CALLBACK_TIMEOUT is not waited out: the answer gives up
    then (the table's lock is not held through the adapter's 25 s of backoff)."""
    monkeypatch.setattr("bot.client.replies.CALLBACK_TIMEOUT", 0.3)
    server, clicked = await wire(answer, answer)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(asyncio.TimeoutError):
        await update_message(clicked, content="x")
    assert loop.time() - started < 0.8
    assert len(server.seen) == 1 and not clicked.response.is_done()
