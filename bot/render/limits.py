"""Discord's limits on a message, and `fit`, which shortens a message to keep within them.

Discord refuses a whole message when one text is too long, and long display names or
a long game can make the table's texts grow past a limit. Every message leaves the
render layer through `fit`, which cuts what is too long and ends it with an ellipsis.
Lengths are counted in UTF-16 code units, as Discord counts them: an emoji outside the
Basic Multilingual Plane (🃏) counts 2.
"""

from __future__ import annotations

from typing import Any

import discord

from bot.render.components import StaticView
from bot.table.spec import MessageFields

CONTENT = 2000
EMBED_TOTAL = 6000  # title, description, field names and values, footer, author: all embeds
TITLE = 256
DESCRIPTION = 4096
FIELDS = 25
FIELD_NAME = 256
FIELD_VALUE = 1024
FOOTER = 2048
AUTHOR = 256
BUTTON_LABEL = 80
PLACEHOLDER = 150
OPTIONS = 25
OPTION_TEXT = 100  # an option's label, value and description each

ELLIPSIS = "…"
FENCE = "```"
# A cut that leaves nothing useful: the smallest a shortened text becomes.
MINIMUM = 1


def units(text: str | None) -> int:
    """A text's length as Discord counts it: UTF-16 code units."""
    if not text:
        return 0
    # isascii() is a flag CPython keeps: no encoding for the common case.
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _cut(text: str, limit: int) -> str:
    """The longest start of `text` of at most `limit` UTF-16 units, whole characters only."""
    size = 0
    for index, char in enumerate(text):
        size += 2 if ord(char) > 0xFFFF else 1
        if size > limit:
            return text[:index]
    return text


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` UTF-16 units, else its start ending with "…"."""
    if units(text) <= limit:
        return text
    if is_code_block(text):
        return shorten_block(text, limit)
    head = _cut(text, max(limit - units(ELLIPSIS), 0))
    # A lone backslash would escape the ellipsis and show itself: drop it with the rest.
    trailing = len(head) - len(head.rstrip("\\"))
    if trailing % 2:
        head = head[:-1]
    return head + ELLIPSIS if limit >= units(ELLIPSIS) else _cut(text, limit)


def words(text: str, limit: int) -> str:
    """`text` if it fits in `limit` UTF-16 units, else its leading whole words ending with
    "…" (never a word cut in two); only a first word longer than `limit` alone is cut like
    `shorten` (nothing else would fit)."""
    if units(text) <= limit:
        return text
    room = limit - units(ELLIPSIS)
    head = _cut(text, max(room, 0))
    # The cut ends a word only if the next character is a space.
    if not head[-1:].isspace() and not text[len(head) : len(head) + 1].isspace():
        head = head.rsplit(None, 1)[0] if len(head.split()) > 1 else ""
    head = head.rstrip(" ,;:·.—-")
    return head + ELLIPSIS if head else shorten(text, limit)


def is_code_block(text: str) -> bool:
    """Whether a text is one fenced code block (its end must survive a cut)."""
    return (
        len(text) >= 2 * len(FENCE) + 1
        and text.startswith(FENCE)
        and text.endswith(FENCE)
        and text.count(FENCE) == 2
        and "\n" in text
    )


def shorten_block(text: str, limit: int) -> str:
    """A fenced code block cut to `limit` UTF-16 units and still closed.

    The first line (a header) and the last (a total) stay; the lines between are dropped
    oldest first, with "…" in their place; lines still too long are cut themselves.
    """
    if units(text) <= limit:
        return text
    opening, _, rest = text.partition("\n")  # "```" or "```lang"
    lines = rest[: -len(FENCE)].rstrip("\n").split("\n")

    def build(body: list[str]) -> str:
        return "\n".join([opening, *body, FENCE])

    head, middle, tail = lines[:1], lines[1:-1], lines[1:][-1:]
    body = [*head, ELLIPSIS, *tail]
    for keep in range(len(middle), -1, -1):
        candidate = [*head, ELLIPSIS, *middle[len(middle) - keep :], *tail]
        if units(build(candidate)) <= limit:
            body = candidate
            break
    block = build(body)
    if units(block) > limit:
        # Lines too long to fit whole: give each an equal share.
        share = (limit - units(build([""] * len(body)))) // len(body)
        block = build([shorten(line, share) for line in body]) if share > 0 else build([])
    return block if units(block) <= limit else _cut(text, limit)


# -- embeds ------------------------------------------------------------------------------


def _texts(embed: discord.Embed) -> list[str]:
    """Every text of an embed that counts towards the 6,000 total."""
    texts = [embed.title or "", embed.description or "", embed.footer.text or ""]
    texts.append(embed.author.name or "")
    for field in embed.fields:
        texts += [field.name or "", field.value or ""]
    return texts


def embed_total(embeds: list[discord.Embed]) -> int:
    """The UTF-16 length of all embeds' texts together, as Discord totals it."""
    return sum(units(text) for embed in embeds for text in _texts(embed))


def _fit_embed(embed: discord.Embed) -> None:
    """Each of an embed's texts within its own limit; at most 25 fields."""
    if embed.title and units(embed.title) > TITLE:
        embed.title = shorten(embed.title, TITLE)
    if embed.description and units(embed.description) > DESCRIPTION:
        embed.description = shorten(embed.description, DESCRIPTION)
    if embed.footer.text and units(embed.footer.text) > FOOTER:
        embed.set_footer(text=shorten(embed.footer.text, FOOTER), icon_url=embed.footer.icon_url)
    author = embed.author
    if author.name and units(author.name) > AUTHOR:
        embed.set_author(
            name=shorten(author.name, AUTHOR), url=author.url, icon_url=author.icon_url
        )
    while len(embed.fields) > FIELDS:
        embed.remove_field(len(embed.fields) - 1)
    for index, field in enumerate(embed.fields):
        name, value = field.name or "", field.value or ""
        if units(name) > FIELD_NAME or units(value) > FIELD_VALUE:
            embed.set_field_at(
                index,
                name=shorten(name, FIELD_NAME),
                value=shorten(value, FIELD_VALUE),
                inline=bool(field.inline),
            )


def _shrink_longest(embeds: list[discord.Embed], excess: int) -> bool:
    """Shorten the longest text of the embeds by up to `excess` units; False if none can."""
    best: tuple[int, discord.Embed, str, int] | None = None
    for embed in embeds:
        candidates = [
            (units(embed.description), "description", -1),
            (units(embed.title), "title", -1),
            (units(embed.footer.text), "footer", -1),
        ]
        for index, field in enumerate(embed.fields):
            candidates.append((units(field.value), "value", index))
            candidates.append((units(field.name), "name", index))
        for size, where, index in candidates:
            if size > MINIMUM and (best is None or size > best[0]):
                best = (size, embed, where, index)
    if best is None:
        return False
    size, embed, where, index = best
    target = max(size - excess, MINIMUM)
    if where == "description":
        embed.description = shorten(embed.description or "", target)
    elif where == "title":
        embed.title = shorten(embed.title or "", target)
    elif where == "footer":
        embed.set_footer(
            text=shorten(embed.footer.text or "", target), icon_url=embed.footer.icon_url
        )
    else:
        field = embed.fields[index]
        name, value = field.name or "", field.value or ""
        if where == "value":
            value = shorten(value, target)
        else:
            name = shorten(name, target)
        embed.set_field_at(index, name=name, value=value, inline=bool(field.inline))
    # A code block cannot always shrink as far as asked: no progress means stop.
    return _embed_units(embed, where, index) < size


def _embed_units(embed: discord.Embed, where: str, index: int) -> int:
    """The length of one text of an embed (for `_shrink_longest`'s progress check)."""
    if where == "description":
        return units(embed.description)
    if where == "title":
        return units(embed.title)
    if where == "footer":
        return units(embed.footer.text)
    field = embed.fields[index]
    return units(field.value if where == "value" else field.name)


def _fits_as_is(embed: discord.Embed) -> tuple[bool, int]:
    """Whether each of an embed's texts is within its own limit and it has at most 25
    fields; and the characters of all its texts.

    Read from the dicts the embed keeps its fields, footer and author in (what its payload is
    made of): the Embed properties make a proxy object per field and per read, and its
    payload is made again when the message is sent; every table message of every move comes
    through here.
    """
    fields: list[dict[str, Any]] = getattr(embed, "_fields", None) or []
    if len(fields) > FIELDS:
        return False, 0
    footer: dict[str, Any] = getattr(embed, "_footer", None) or {}
    author: dict[str, Any] = getattr(embed, "_author", None) or {}
    total = 0
    for text, limit in (
        (embed.title, TITLE),
        (embed.description, DESCRIPTION),
        (footer.get("text"), FOOTER),
        (author.get("name"), AUTHOR),
    ):
        if text:
            total += len(text)
            if 2 * len(text) > limit and units(text) > limit:
                return False, 0
    for field in fields:
        name, value = field.get("name") or "", field.get("value") or ""
        total += len(name) + len(value)
        if (2 * len(name) > FIELD_NAME and units(name) > FIELD_NAME) or (
            2 * len(value) > FIELD_VALUE and units(value) > FIELD_VALUE
        ):
            return False, 0
    return True, total


def fit_embeds(embeds: list[discord.Embed]) -> None:
    """Shorten embeds in place: each text within its limit, all texts within 6,000."""
    characters = 0
    for embed in embeds:
        fits, length = _fits_as_is(embed)
        if fits:
            characters += length
        else:
            _fit_embed(embed)
            characters += sum(len(text) for text in _texts(embed))
    # A character is at most 2 units: embeds this short cannot be over the total (a table's
    # message, nearly always), and counting every text's units is skipped.
    if 2 * characters <= EMBED_TOTAL:
        return
    # A few rounds at most: each shortens the longest text by the whole excess.
    for _ in range(4 * (FIELDS * 2 + 3) * max(len(embeds), 1)):
        excess = embed_total(embeds) - EMBED_TOTAL
        if excess <= 0 or not _shrink_longest(embeds, excess):
            return


# -- components --------------------------------------------------------------------------


def _inner(item: Any) -> Any:
    """The button or select behind a DynamicItem (TableButton, TableSelect), or the item."""
    return item.item if isinstance(item, discord.ui.DynamicItem) else item


def fit_components(view: StaticView) -> None:
    """Shorten the labels, placeholders and options of a StaticView's payloads in place."""
    for row in view.rows:
        for component in row:
            label = component.get("label")
            if label and units(label) > BUTTON_LABEL:
                component["label"] = shorten(label, BUTTON_LABEL)
            placeholder = component.get("placeholder")
            if placeholder and units(placeholder) > PLACEHOLDER:
                component["placeholder"] = shorten(placeholder, PLACEHOLDER)
            options = component.get("options")
            if options is not None:
                options = component["options"] = options[:OPTIONS]
                for option in options:
                    for key in ("label", "value", "description"):
                        text = option.get(key)
                        if text and units(text) > OPTION_TEXT:
                            option[key] = shorten(text, OPTION_TEXT)


def fit_view(view: discord.ui.View) -> None:
    """Shorten button labels, select placeholders and options in place."""
    if isinstance(view, StaticView):
        fit_components(view)
        return
    for child in view.children:
        item = _inner(child)
        if isinstance(item, discord.ui.Button):
            if item.label and units(item.label) > BUTTON_LABEL:
                item.label = shorten(item.label, BUTTON_LABEL)
        elif isinstance(item, discord.ui.Select):
            if item.placeholder and units(item.placeholder) > PLACEHOLDER:
                item.placeholder = shorten(item.placeholder, PLACEHOLDER)
            options = list(item.options)[:OPTIONS]
            for option in options:
                option.label = shorten(option.label, OPTION_TEXT)
                option.value = shorten(option.value, OPTION_TEXT)
                if option.description:
                    option.description = shorten(option.description, OPTION_TEXT)
            item.options = options


def fit(fields: MessageFields) -> MessageFields:
    """A message shortened in place to Discord's limits (never refused, never raising)."""
    content = fields.get("content")
    if isinstance(content, str) and units(content) > CONTENT:
        fields["content"] = shorten(content, CONTENT)
    embeds: list[discord.Embed] = []
    if isinstance(fields.get("embed"), discord.Embed):
        embeds.append(fields["embed"])
    embeds += [embed for embed in fields.get("embeds") or [] if isinstance(embed, discord.Embed)]
    fit_embeds(embeds)
    view = fields.get("view")
    if isinstance(view, discord.ui.View):
        fit_view(view)
    return fields
