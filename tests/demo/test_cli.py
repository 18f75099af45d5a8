"""`python -m bot demo`'s command line: its options, and one clear line for bad input."""

from __future__ import annotations

import socket

import pytest

import bot.demo
from bot.__main__ import main
from bot.demo.cli import UsageError, parse
from bot.demo.world import DemoOptions


def test_defaults() -> None:
    """No option: English, any free port, no simulated people, the usual pace, a browser."""
    assert parse([]) == DemoOptions(lang="en", port=0, players=0, fast=False, browser=True)


def test_every_option() -> None:
    """Each option reaches the demo's settings."""
    options = parse(["--lang", "ru", "--port", "8765", "--players", "2", "--fast", "--no-browser"])
    assert options == DemoOptions(lang="ru", port=8765, players=2, fast=True, browser=False)
    assert options.locale == "ru"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--lang", "fr"], "--lang 'fr' is not one of en, de, ru, it"),
        (["--players", "7"], "--players 7 is not between 0 and 6"),
        (["--port", "70000"], "--port 70000 is not a port"),
        (["--port", "many"], "invalid int value"),
        (["--colour"], "unrecognized arguments: --colour"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad input: one line naming the problem, exit status 2, and no demo started."""
    with pytest.raises(UsageError):
        parse(argv)
    assert main(["demo", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cardtable: error: ") and says in err


def test_taken_port_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A port another program holds: one line, exit status 2, before the bot starts."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert main(["demo", "--no-browser", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err


def test_missing_extra_says_how_to_add_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the preview's packages: one line with the command that adds them, exit 2."""
    monkeypatch.setattr(bot.demo, "missing_modules", lambda: ["aiohttp"])
    assert main(["demo"]) == 2
    err = capsys.readouterr().err
    assert err == bot.demo.MISSING_EXTRA + "\n"
    assert "uv run --extra demo python -m bot demo" in err


def test_help_lists_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m bot --help` names the demo command."""
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "demo" in capsys.readouterr().out
