"""The demo's front page on 127.0.0.1: the demo server's channels, each with a button that
opens SimCord's preview of it, and a Quick game per game.

SimCord's preview shows one channel per session and may not be framed, so the front page
switches the session to the chosen channel and sends the browser there; Back returns.
The page is public on loopback, but every action needs the token from the URL's fragment
(which the browser never sends), like the preview's own capability.
"""

from __future__ import annotations

import html
import json
import logging
import secrets
import socket
from typing import Any

from aiohttp import web

from bot.demo.world import CLOCK_STEP, DM, GAMES, POST, World
from bot.i18n import t

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
}

PAGE = """<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ margin: 0; background: #313338; color: #dbdee1;
  font: 16px/1.4 "gg sans", "Noto Sans", "Helvetica Neue", Arial, sans-serif; }}
main {{ max-width: 40rem; margin: 0 auto; padding: 1.5rem 1rem; }}
h1 {{ font-size: 1.5rem; color: #f2f3f5; margin: 0 0 .5rem; }}
p {{ margin: .4rem 0; }}
.muted {{ color: #949ba4; font-size: .9rem; }}
section {{ background: #2b2d31; border-radius: 8px; padding: .8rem 1rem; margin: 1rem 0; }}
h2 {{ font-size: 1.1rem; color: #f2f3f5; margin: 0 0 .3rem; }}
h2 .hash {{ color: #80848e; margin-right: .2rem; }}
code {{ background: #1e1f22; padding: .1rem .3rem; border-radius: 4px; }}
.buttons {{ display: flex; gap: .5rem; flex-wrap: wrap; margin-top: .6rem; }}
button {{ font: inherit; color: #fff; border: 0; border-radius: 4px; padding: .45rem 1rem;
  cursor: pointer; background: #4e5058; }}
button.primary {{ background: #5865f2; }}
button.success {{ background: #248046; }}
button:disabled {{ opacity: .5; cursor: wait; }}
#status {{ color: #f0b232; min-height: 1.4em; }}
</style>
</head>
<body>
<main>
<h1>{title}</h1>
<p>{intro}</p>
<p class="muted">{back}</p>
{sections}
<p id="status" role="status"></p>
</main>
<script>
const token = location.hash.slice(1);
const status = document.getElementById("status");
async function go(button) {{
  document.querySelectorAll("button").forEach((b) => (b.disabled = true));
  status.textContent = {wait};
  try {{
    const clock = button.dataset.clock;
    const answer = await fetch(clock ? "/clock" : "/go", {{
      method: "POST",
      headers: {{ "Content-Type": "application/json", "X-Demo-Token": token }},
      body: JSON.stringify(
        clock
          ? {{ move: clock }}
          : {{ where: button.dataset.where, quick: button.dataset.quick === "1" }}
      ),
    }});
    const reply = await answer.json().catch(() => ({{}}));
    if (!answer.ok) throw new Error(reply.error || "");
    location.href = reply.url;
  }} catch (error) {{
    status.textContent = error.message || {failed};
    document.querySelectorAll("button").forEach((b) => (b.disabled = false));
  }}
}}
document.querySelectorAll("button").forEach((b) => b.addEventListener("click", () => go(b)));
window.addEventListener("pageshow", () => {{
  document.querySelectorAll("button").forEach((b) => (b.disabled = false));
  status.textContent = "";
}});
</script>
</body>
</html>
"""

SECTION = """<section>
<h2>{heading}</h2>
<p>{text}</p>
<div class="buttons">{buttons}</div>
</section>"""


def script_string(text: str) -> str:
    """A JavaScript string literal that cannot end the page's script element."""
    return json.dumps(text, ensure_ascii=False).replace("</", "<\\/")


def page(lang: str) -> str:
    """The front page in the viewer's language."""

    def text(key: str, **params: object) -> str:
        return html.escape(t(key, lang, **params))

    def button(where: str, label: str, style: str, quick: bool = False) -> str:
        flag = "1" if quick else "0"
        return (
            f'<button type="button" class="{style}" data-where="{where}" data-quick="{flag}">'
            f"{label}</button>"
        )

    sections = []
    for game in GAMES:
        name = text(f"game.{game}.name")
        sections.append(
            SECTION.format(
                heading=f'<span class="hash">#</span>{name}',
                text=text("demo.game_hint", command=f"/{game} start"),
                buttons=button(game, text("demo.open"), "primary")
                + button(game, text("demo.quick"), "success", quick=True),
            )
        )
    clock = "".join(
        f'<button type="button" data-clock="{move}">{text(key, hours=CLOCK_STEP // 3600)}</button>'
        for move, key in (("step", "demo.clock_step"), ("deadline", "demo.clock_deadline"))
    )
    sections.append(
        SECTION.format(
            heading=f'<span class="hash">#</span>{text("demo.post")}',
            text=text("demo.post_hint"),
            buttons=button(POST, text("demo.open"), "primary")
            + button(POST, text("demo.quick"), "success", quick=True)
            + clock,
        )
    )
    sections.append(
        SECTION.format(
            heading=text("demo.dm"),
            text=text("demo.dm_hint"),
            buttons=button(DM, text("demo.open"), "primary"),
        )
    )
    return PAGE.format(
        lang=lang,
        title=text("demo.title"),
        intro=text("demo.intro"),
        back=text("demo.back"),
        sections="\n".join(sections),
        wait=script_string(t("demo.opening", lang)),
        failed=script_string(t("demo.failed", lang)),
    )


def bind(port: int) -> socket.socket:
    """Take the port on loopback now, so a taken one fails before the bot starts."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind((HOST, port))
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    listener.setblocking(False)
    return listener


class Launcher:
    """The front page's web server, on a socket bound beforehand."""

    def __init__(self, world: World, listener: socket.socket) -> None:
        self.world = world
        self.listener = listener
        self.token = secrets.token_urlsafe(24)
        self.runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """The front page's address, with the token in its fragment."""
        port = self.listener.getsockname()[1]
        return f"http://{HOST}:{port}/#{self.token}"

    async def start(self) -> None:
        """Serve the page and its one action."""
        app = web.Application()
        app.router.add_get("/", self.index)
        app.router.add_post("/go", self.go)
        app.router.add_post("/clock", self.clock)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.SockSite(self.runner, self.listener).start()

    async def close(self) -> None:
        """Stop serving."""
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    async def index(self, request: web.Request) -> web.Response:
        """The front page."""
        return web.Response(
            text=page(self.world.options.lang), content_type="text/html", headers=HEADERS
        )

    async def body(self, request: web.Request) -> Any:
        """The action's JSON body, once the token is checked."""
        token = request.headers.get("X-Demo-Token", "")
        if not secrets.compare_digest(token.encode(), self.token.encode()):
            raise web.HTTPUnauthorized(headers=HEADERS)
        try:
            return await request.json()
        except ValueError:
            raise web.HTTPBadRequest(headers=HEADERS) from None

    async def clock(self, request: web.Request) -> web.Response:
        """Move the virtual clock on (a step, or past the next deadline) and answer with
        the viewer's direct messages, where a "your turn" notice arrives."""
        body = await self.body(request)
        move = body.get("move") if isinstance(body, dict) else None
        if move == "step":
            await self.world.move_clock(CLOCK_STEP)
        elif move == "deadline":
            if not await self.world.clock_to_deadline():
                error = t("demo.no_deadline", self.world.options.lang)
                return web.json_response({"error": error}, status=409, headers=HEADERS)
        else:
            raise web.HTTPBadRequest(headers=HEADERS)
        url = await self.world.show(DM)
        return web.json_response({"url": url}, headers=HEADERS)

    async def go(self, request: web.Request) -> web.Response:
        """Open a channel (after a Quick game, if asked) and answer with its preview URL."""
        body = await self.body(request)
        where = body.get("where") if isinstance(body, dict) else None
        if where not in (*GAMES, POST, DM):
            raise web.HTTPBadRequest(headers=HEADERS)
        if body.get("quick") and where in (*GAMES, POST):
            await self.world.quick_game(where)
        url = await self.world.show(where)
        return web.json_response({"url": url}, headers=HEADERS)
