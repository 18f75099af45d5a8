"""The lean click path below the interaction layer: the plain callback, the slimmed click."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import discord
import pytest
from discord.enums import InteractionResponseType
from discord.webhook.async_ import async_context

from bot.app import slimming_clicked_messages
from bot.interactions import update_message
from bot.render.components import StaticView


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
    http = SimpleNamespace(proxy=None, proxy_auth=None)
    state = SimpleNamespace(allowed_mentions=discord.AllowedMentions.none(), http=http)
    return SimpleNamespace(
        id=1234, token="tok", _session=object(), _state=state, response=Response()
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
