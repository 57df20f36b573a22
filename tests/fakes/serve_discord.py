"""FakeDiscord in a process of its own, driven by JSON lines on stdin.

For measurements where the bot's process must do nothing but be the bot
(``bench/discord_fanout.py``): the fake's HTTP work, its schema checks and the load they make
run here, on their own CPU, as ``serve_telegram.py`` serves the Bot API.

    python tests/fakes/serve_discord.py [--latency SECONDS] [--channels FIRST:COUNT]

The first line on stdout is ``{"base_url": ..., "port": ...}``. Then each request line on
stdin gets one answer line on stdout:

* ``{"op": "stats"}`` -> the successful message creates' arrival times, the 429s (each
  ``[at, scope]``), the invalid requests of the last 10 minutes, and the channels reached;
* ``{"op": "close"}`` or end of input -> the server stops and the process exits.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fakes.discord_api import FakeDiscord

ROUTE = "POST /channels/{channel_id}/messages"
GC_FREEZE_SECONDS = 1.0  # as serve_telegram.py: no full collection pauses the arrivals


async def _freeze_gc() -> None:
    while True:
        await asyncio.sleep(GC_FREEZE_SECONDS)
        gc.freeze()


def _stats(dc: FakeDiscord) -> dict[str, Any]:
    created = [c for c in dc.calls(ROUTE) if c.ok]
    return {
        "arrivals": sorted(c.at for c in created),
        "limited": [[v.at, v.scope] for v in dc.limit_violations],
        "invalid": dc.invalid_in_window(),
        "reached": len({c.channel for c in created}),
    }


async def _serve(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with FakeDiscord() as dc:
        dc.latency = args.latency
        first, _, count = args.channels.partition(":")
        for n in range(int(count or 0)):
            dc.add_channel(str(int(first) + n))
        freezer = asyncio.create_task(_freeze_gc())
        try:
            _answer({"base_url": dc.base_url, "port": dc.port})
            while line := await reader.readline():
                op = json.loads(line).get("op")
                if op == "close":
                    break
                _answer(_stats(dc) if op == "stats" else {"error": f"unknown op {op!r}"})
        finally:
            freezer.cancel()


def _answer(body: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--channels", default="0:0", help="FIRST:COUNT channels that exist")
    asyncio.run(_serve(parser.parse_args()))


if __name__ == "__main__":
    main()
