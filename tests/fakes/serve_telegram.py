"""FakeTelegram in a process of its own, driven by JSON lines on stdin.

For measurements where the bot's process must do nothing but be the bot (``bench/commands.py``):
the fake's HTTP work and the load it generates run here, on their own CPU.

    python tests/fakes/serve_telegram.py [--token TOKEN] [--long-poll-cap SECONDS]
        [--latency SECONDS] [--enforce-limits] [--global-rate N] [--chat-interval SECONDS]

``--latency`` and ``--enforce-limits`` (with ``--global-rate`` and ``--chat-interval``) set the
attributes of the same names (see ``FakeTelegram``): ``bench/fanout.py`` sends through them.

The first line on stdout is ``{"base_url": ..., "base_file_url": ..., "port": ...}``. Then each
request line on stdin gets one answer line on stdout:

* ``{"op": "wait_for_poll"}`` -> ``{"ok": true}`` once a getUpdates request is held open;
* ``{"op": "play", "script": [[OFFSET, CHAT_ID, TEXT, LANGUAGE_CODE], ...], "settle": S}``
  injects each message at ``OFFSET`` seconds after the start (in order of offset), then waits
  until every chat has had as many successful sendMessage calls as it was sent messages, at
  most ``S`` seconds after the last one -> ``{"injected": [[CHAT_ID, AT], ...], "sent":
  [[CHAT_ID, AT], ...], "late_injections": N, "cpu_seconds": C}``: ``AT`` is
  ``time.monotonic()`` at injection and at the sendMessage request's arrival; ``sent`` holds
  the successful sendMessage calls made during the play; ``late_injections`` counts messages
  injected more than 10 ms after their offset (the player fell behind); ``cpu_seconds`` is
  this process's CPU time during the play;
* ``{"op": "counts"}`` -> the request count by method;
* ``{"op": "stats"}`` -> ``FakeTelegram.stats()`` (also at ``GET {port}/_stats``);
* ``{"op": "close"}`` or end of input -> the server stops and the process exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fakes.telegram_api import (
    CHAT_INTERVAL_SECONDS,
    DEFAULT_GLOBAL_RATE,
    DEFAULT_LONG_POLL_CAP,
    DEFAULT_TOKEN,
    PAID_BROADCAST_RATE,
    FakeTelegram,
)

LATE_SECONDS = 0.010  # an injection this far behind its offset is reported as late
GC_FREEZE_SECONDS = 1.0  # see _freeze_gc


async def _play(tg: FakeTelegram, request: dict[str, Any]) -> dict[str, Any]:
    script = sorted(request["script"], key=lambda item: item[0])
    settle = float(request.get("settle", 10.0))
    expected: Counter[int | str] = Counter(item[1] for item in script)
    first_call = len(tg.sent)
    cpu_started = time.process_time()
    loop = asyncio.get_running_loop()
    started = loop.time()
    injected: list[list[Any]] = []
    late = 0
    for offset, chat_id, text, language_code in script:
        delay = started + offset - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        elif -delay > LATE_SECONDS:
            late += 1
        at = time.monotonic()
        tg.message(chat_id, text, language_code=language_code)
        injected.append([chat_id, at])

    answered: Counter[int | str] = Counter()
    play_started = injected[0][1] if injected else time.monotonic()

    def count(call: Any) -> bool:
        if call.method == "sendMessage" and call.ok and call.at >= play_started:
            answered[call.chat_id] += 1
        return all(answered[chat] >= n for chat, n in expected.items())

    with contextlib.suppress(TimeoutError):
        await tg.wait_for(count, timeout=settle)
    sent = [
        [call.chat_id, call.at]
        for call in tg.sent[first_call:]
        if call.method == "sendMessage" and call.ok and call.at >= play_started
    ]
    return {
        "injected": injected,
        "sent": sent,
        "late_injections": late,
        "cpu_seconds": time.process_time() - cpu_started,
    }


async def _freeze_gc() -> None:
    """Keep the recorded calls out of the garbage collector's full collections.

    The fake keeps every call it answered, for as long as it runs. With 10,000 of them a full
    collection paused the process for 100 ms, and the requests it then read in one go
    counted as a burst against the flood limits it enforces: the pause was the fake's, not
    the bot's. Once a second what exists is moved to the collector's permanent generation.
    """
    while True:
        await asyncio.sleep(GC_FREEZE_SECONDS)
        gc.freeze()


async def _serve(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with FakeTelegram(token=args.token, long_poll_cap=args.long_poll_cap) as tg:
        tg.latency = args.latency
        tg.enforce_limits = args.enforce_limits
        tg.global_rate = args.global_rate
        tg.paid_rate = args.paid_rate
        tg.chat_interval = args.chat_interval
        freezer = asyncio.create_task(_freeze_gc())
        try:
            await _requests(tg, reader)
        finally:
            freezer.cancel()


async def _requests(tg: FakeTelegram, reader: asyncio.StreamReader) -> None:
    _answer({"base_url": tg.base_url, "base_file_url": tg.base_file_url, "port": tg.port})
    while line := await reader.readline():
        request = json.loads(line)
        op = request.get("op")
        if op == "close":
            break
        if op == "wait_for_poll":
            await tg.wait_for_poll(timeout=float(request.get("timeout", 10.0)))
            _answer({"ok": True})
        elif op == "play":
            _answer(await _play(tg, request))
        elif op == "counts":
            _answer(dict(tg.request_count))
        elif op == "stats":
            _answer(tg.stats())
        else:
            _answer({"error": f"unknown op {op!r}"})


def _answer(body: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token", default=DEFAULT_TOKEN)
    parser.add_argument("--long-poll-cap", type=float, default=DEFAULT_LONG_POLL_CAP)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--enforce-limits", action="store_true")
    parser.add_argument("--global-rate", type=int, default=DEFAULT_GLOBAL_RATE)
    parser.add_argument("--paid-rate", type=int, default=PAID_BROADCAST_RATE)
    parser.add_argument("--chat-interval", type=float, default=CHAT_INTERVAL_SECONDS)
    asyncio.run(_serve(parser.parse_args()))


if __name__ == "__main__":
    main()
