"""Imports point one way: engines ← ai ← table core ← render ← Discord glue ← cogs / app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Each layer and the first-party modules it may import (by prefix); anything not listed
# is forbidden. Third-party imports are checked separately (the core never sees discord).
LAYERS: dict[str, tuple[str, ...]] = {
    "bot/engines": ("bot.engines",),
    "bot/ai": ("bot.engines", "bot.ai"),
    "bot/table": ("bot.engines", "bot.ai", "bot.table", "bot.storage", "bot.records"),
    "bot/records": ("bot.records",),
    "bot/storage": ("bot.records", "bot.storage"),
    # Stats and leaderboards (bot/queries/players.py) sit beside the table core: Discord-free reads
    # of the records that the render layer and the cogs' glue show.
    "bot/queries/players.py": ("bot.records", "bot.storage"),
    "bot/queries/history.py": ("bot.storage", "bot.table"),
    "bot/render": ("bot.engines", "bot.table", "bot.i18n", "bot.render", "bot.queries.players"),
    # A move's REST calls: the HTTP client, and Discord's answers handled on it.
    "bot/client/transport/http1.py": (),
    "bot/client/transport/rest.py": ("bot.client.transport.http1",),
    "bot/client/replies.py": (
        "bot.client.transport.http1",
        "bot.i18n",
        "bot.client.transport.rest",
        "bot.table",
    ),
    "bot/client/guild_settings.py": ("bot.storage",),
    "bot/client/languages.py": ("bot.client.guild_settings", "bot.storage"),
    "bot/client/guild_images.py": ("bot.client.guild_settings", "bot.storage"),
    "bot/client/publishing/publisher.py": (
        "bot.i18n.catalogue",
        "bot.render",
        "bot.client.transport.rest",
        "bot.storage",
        "bot.table",
        "bot.client.bot",
    ),
    "bot/client/game_cog.py": (
        "bot.i18n.catalogue",
        "bot.client.replies",
        "bot.render",
        "bot.queries.players",
        "bot.storage",
        "bot.table",
        "bot.client.bot",
    ),
    "bot/client/bot.py": (
        "bot.runtime.gc_tuning",
        "bot.i18n.commands",
        "bot.client.guild_images",
        "bot.runtime.health",
        "bot.client.transport.http1",
        "bot.client.replies",
        "bot.client.languages",
        "bot.client.publishing.publisher",
        "bot.render",
        "bot.runtime.settings",
        "bot.storage",
        "bot.table",
    ),
}
PURE = (
    "bot/engines",
    "bot/ai",
    "bot/records",
    "bot/table",
    "bot/storage",
    "bot/queries/players.py",
    "bot/queries/history.py",
)


def modules_imported(path: Path) -> set[str]:
    """Every module a file imports (type-checking-only imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def files_of(layer: str) -> list[Path]:
    """The Python files of a layer (a folder or one module)."""
    path = REPO / layer
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def first_party(module: str) -> bool:
    """Whether a module is the bot's own."""
    return module.split(".")[0] in ("bot", "cogs")


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_imports_point_one_way(layer: str) -> None:
    """A layer imports only the layers below it (and never a cog)."""
    allowed = LAYERS[layer]
    wrong = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in files_of(layer)
        for module in modules_imported(path)
        if first_party(module)
        and not any(module == a or module.startswith(a + ".") for a in allowed)
    ]
    assert wrong == []


@pytest.mark.parametrize("layer", PURE)
def test_pure_layers_never_touch_discord(layer: str) -> None:
    """Engines, computer players and the table core run without Discord."""
    wrong = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in files_of(layer)
        for module in modules_imported(path)
        if module.split(".")[0] in ("discord", "aiohttp")
    ]
    assert wrong == []


def test_app_imports_no_cog() -> None:
    """The bot factory loads cogs as extensions by name; it imports none of them."""
    assert not [m for m in modules_imported(REPO / "bot/client/bot.py") if m.startswith("cogs")]
