"""`python -m bot demo [--lang L] [--port P] [--players N] [--fast] [--no-browser]`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
import tempfile
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from bot.demo.crowd import Crowd
from bot.demo.launcher import Launcher, bind
from bot.demo.world import LOCALES, MAX_PEOPLE, DemoOptions, World, pace, speaking
from bot.i18n import t

EXIT_USAGE = 2
log = logging.getLogger(__name__)


class UsageError(Exception):
    """Bad input on the command line: one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse that reports bad input as one line instead of the usage and an error."""

    def error(self, message: str) -> NoReturn:
        """Raise instead of printing the usage and exiting."""
        raise UsageError(message)


def parse(argv: Sequence[str]) -> DemoOptions:
    """The demo's options; UsageError for bad input."""
    parser = Parser(
        prog="python -m bot demo",
        description="Play the real bot in the browser, inside a simulated Discord (SimCord).",
    )
    parser.add_argument(
        "--lang", default="en", help=f"the viewer's language: {', '.join(LOCALES)} (default: en)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)"
    )
    parser.add_argument(
        "--players",
        type=int,
        default=0,
        help=f"simulated people (0-{MAX_PEOPLE}) who join your tables and play (default: 0)",
    )
    parser.add_argument(
        "--fast", action="store_true", help="computers move at once, not after two seconds"
    )
    parser.add_argument(
        "--no-browser", dest="browser", action="store_false", help="only print the address"
    )
    args = parser.parse_args(list(argv))
    if args.lang not in LOCALES:
        raise UsageError(f"--lang {args.lang!r} is not one of {', '.join(LOCALES)}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port (0-65535; 0 picks a free one)")
    if not 0 <= args.players <= MAX_PEOPLE:
        raise UsageError(f"--players {args.players} is not between 0 and {MAX_PEOPLE}")
    return DemoOptions(
        lang=args.lang, port=args.port, players=args.players, fast=args.fast, browser=args.browser
    )


def configure_logging() -> None:
    """Warnings and errors to stderr; the bot's INFO lines would bury the address."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def say(text: str) -> None:
    """A line for the person at the terminal, at once (stdout may be a pipe)."""
    print(text, flush=True)


async def serve(options: DemoOptions, listener: socket.socket) -> None:
    """Run the demo until Ctrl+C (SIGINT) or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    with tempfile.TemporaryDirectory(prefix="cardtable-demo-") as folder:
        world = await World.start(options, Path(folder))
        launcher = Launcher(world, listener)
        crowd = asyncio.create_task(Crowd(world).run(), name="demo crowd")
        follower = asyncio.create_task(world.follow(), name="demo follower")
        try:
            await launcher.start()
            say(t("demo.ready", options.lang, url=launcher.url))
            say(t("demo.stop", options.lang))
            if options.browser:
                # Off the loop: finding a browser may take a moment, or fail quietly.
                await asyncio.to_thread(webbrowser.open, launcher.url)
            await stop.wait()
        finally:
            for task in (follower, crowd):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await launcher.close()
            await world.close()
    say(t("demo.stopped", options.lang))


def run(argv: Sequence[str]) -> int:
    """Parse, check the port, and run the demo; returns the exit status."""
    try:
        options = parse(argv)
    except UsageError as error:
        print(f"cardtable: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        # Before the bot starts: a taken port fails at once.
        listener = bind(options.port)
    except OSError as error:
        print(
            f"cardtable: error: cannot listen on 127.0.0.1:{options.port} "
            f"({error.strerror or error}); choose another with --port",
            file=sys.stderr,
        )
        return EXIT_USAGE
    configure_logging()
    try:
        with listener, speaking(options.locale), pace(options.fast):
            asyncio.run(serve(options, listener))
    except KeyboardInterrupt:
        # A second Ctrl+C during the shutdown: it was asked for, not a failure.
        return 0
    return 0
