"""A database of a build that kept a feed's credentials, for revision 0005's upgrade test.

Run by ``make_credentials_dump.sh`` with the earlier build's code on ``PYTHONPATH`` and
``DATABASE_URL`` set: it serves a private Atom feed on 127.0.0.1:FEED_PORT whose entries
link and are identified relatively, and drives that build's own CLI:

1. ``import`` one Telegram chat following ``rl``;
2. the feed configured with token OLD: ``poll`` (baseline), one entry more, ``poll``,
   ``digest --now`` (Telegram cannot be reached: the digest stays queued);
3. the token rotated to NEW (a second ``sources`` row, as that build made one): ``poll``
   (its baseline), one entry more, ``poll``, ``digest --now``.

What the build stored then holds ``user:PASSWORD@`` and both tokens in ``sources.name``,
page keys, links and paper identities, and in the queued messages.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from aiohttp import web

FEED_PORT = 18765
USER, PASSWORD = "reader", "OldBuildPassw0rd"
OLD_TOKEN, NEW_TOKEN = "OldBuildTokenOLD1", "OldBuildTokenNEW2"
ENTRY = """<entry><id>papers/{n}</id><title>Paper {n}</title><link href="papers/{n}.html"/>
<updated>2026-12-0{n}T08:00:00Z</updated><category term="rl"/><summary>TL;DR {n}.</summary>
</entry>"""


def feed(count: int) -> bytes:
    entries = "".join(ENTRY.format(n=n) for n in range(1, count + 1))
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>Private</title><id>urn:private</id><updated>2026-12-01T00:00:00Z</updated>"
        f'<link href=""/>{entries}</feed>'
    ).encode()


def source(token: str) -> str:
    return f"http://{USER}:{PASSWORD}@127.0.0.1:{FEED_PORT}/wiki/feed.atom?token={token}"


def trendbot(*args: str, sources: str, cwd: Path) -> None:
    env = dict(
        os.environ,
        WIKI_SOURCES=sources,
        TELEGRAM_BOT_TOKEN="123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345678",
        TELEGRAM_API_BASE_URL="http://127.0.0.1:9/bot",  # nothing listens: sends stay queued
    )
    subprocess.run([sys.executable, "-m", "bot", *args], env=env, cwd=cwd, check=False)


async def main() -> None:
    state = {"count": 2}

    async def handle(_request: web.Request) -> web.Response:
        return web.Response(body=feed(state["count"]), content_type="application/atom+xml")

    app = web.Application()
    app.router.add_get("/wiki/feed.atom", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", FEED_PORT).start()
    try:
        with tempfile.TemporaryDirectory() as work:
            cwd = Path(work)
            chats = cwd / "chats.jsonl"
            line = 'trendbot:1 filter="rl" mode=daily time=09:00 tz=UTC lang=en'
            chats.write_text(json.dumps({"chat": "telegram:1001", "settings": line}) + "\n")

            async def run(*args: str, token: str) -> None:
                await asyncio.to_thread(trendbot, *args, sources=source(token), cwd=cwd)

            await run("import", str(chats), token=OLD_TOKEN)
            for token in (OLD_TOKEN, NEW_TOKEN):
                await run("poll", token=token)
                state["count"] += 1
                await run("poll", token=token)
                await run("digest", "--now", token=token)
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
