"""The bot's bounded HTTP server (``bot/ops/http_server.py``) against aiohttp's own server.

Each server runs in a process of its own with ``RLIMIT_NOFILE`` at 256 and one route,
``GET /healthz``; this process then measures, for each::

    .venv/bin/python bench/http_server.py [--seconds 15] [--slow 300]

- **slow clients**: ``--slow`` connections that send a request head a header line every 2 s
  and never end it (reconnecting 0.5 s after the server closes one), for ``--seconds``;
  meanwhile a probe asks ``GET /healthz`` every 0.5 s, each with 5 s to be answered. It
  prints the probes answered, their median and slowest answer, and the descriptors the
  server held at the end;
- **throughput**: 20 keep-alive connections asking ``GET /healthz`` 200 times each, one
  request at a time, with no slow client: requests a second.

``aiohttp`` is ``web.AppRunner`` with ``keepalive_timeout`` at the bounded server's head
deadline (10 s): since aiohttp 3.14 that timer also closes a connection that has not sent
its first request, the nearest aiohttp comes to a head deadline; it has no cap on
connections and leaves accepting to asyncio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESCRIPTORS = 256
PROBE_EVERY = 0.5
PROBE_TIMEOUT = 5.0
DRIBBLE_SECONDS = 2.0
RECONNECT_SECONDS = 0.5
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n"


async def _serve(kind: str) -> None:
    from aiohttp import web

    from bot.ops import http_server

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    middlewares = [http_server.request_deadline] if kind == "bounded" else []
    app = web.Application(middlewares=middlewares)
    app.router.add_get("/healthz", healthz)
    if kind == "bounded":
        _server, port = await http_server.start(app, host="127.0.0.1", port=0)
    else:
        runner = web.AppRunner(
            app, access_log=None, keepalive_timeout=http_server.HEAD_TIMEOUT_SECONDS
        )
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        assert runner.addresses
        port = runner.addresses[0][1]
    print(port, flush=True)
    await asyncio.Event().wait()


def _start(kind: str) -> tuple[subprocess.Popen[str], int]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        preexec_fn=limit,  # only setrlimit, before exec
    )
    assert child.stdout is not None
    return child, int(child.stdout.readline())


async def _ask(
    port: int, writer_reader: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
) -> None:
    reader, writer = writer_reader or await asyncio.open_connection("127.0.0.1", port)
    writer.write(HEALTHZ)
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    await reader.readexactly(length)
    if writer_reader is None:
        writer.close()


async def _slow_client(port: int, stop: float) -> None:
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n")
            n = 0
            while time.monotonic() < stop and not reader.at_eof():
                writer.write(b"X-Slow-%d: 1\r\n" % n)
                await writer.drain()
                n += 1
                try:
                    await asyncio.wait_for(reader.read(1), DRIBBLE_SECONDS)
                except TimeoutError:
                    continue
            writer.close()
        except (OSError, asyncio.IncompleteReadError):
            pass
        await asyncio.sleep(RECONNECT_SECONDS)


async def _slow_clients(port: int, pid: int, slow: int, seconds: float) -> str:
    stop = time.monotonic() + seconds
    clients = [asyncio.create_task(_slow_client(port, stop)) for _ in range(slow)]
    answered: list[float] = []
    probes = 0
    await asyncio.sleep(1.0)  # the slow clients connect first
    while time.monotonic() < stop:
        probes += 1
        began = time.monotonic()
        try:
            await asyncio.wait_for(_ask(port), PROBE_TIMEOUT)
            answered.append(time.monotonic() - began)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, StopIteration):
            pass
        await asyncio.sleep(PROBE_EVERY)
    held = len(os.listdir(f"/proc/{pid}/fd"))
    await asyncio.gather(*clients, return_exceptions=True)
    median = f"{statistics.median(answered) * 1000:.0f} ms" if answered else "-"
    slowest = f"{max(answered) * 1000:.0f} ms" if answered else "-"
    return (
        f"{len(answered)}/{probes} probes answered, median {median}, slowest {slowest}, "
        f"{held} descriptors held"
    )


async def _throughput(port: int, connections: int = 20, each: int = 200) -> float:
    async def worker() -> None:
        pair = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(each):
            await _ask(port, pair)
        pair[1].close()

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return connections * each / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--slow", type=int, default=300)
    parser.add_argument("--serve", choices=["bounded", "aiohttp"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.serve))
        return
    print(f"load average {os.getloadavg()[0]:.1f}; RLIMIT_NOFILE {DESCRIPTORS} in each server")
    for kind in ("bounded", "aiohttp"):
        for part in ("throughput", "slow"):
            child, port = _start(kind)  # a fresh server for each part
            try:
                if part == "throughput":
                    rate = asyncio.run(_throughput(port))
                    print(f"{kind:8} throughput: {rate:,.0f} requests/s")
                else:
                    line = asyncio.run(_slow_clients(port, child.pid, args.slow, args.seconds))
                    print(f"{kind:8} {args.slow} slow clients, {args.seconds:.0f} s: {line}")
            finally:
                child.kill()
                child.wait()


if __name__ == "__main__":
    main()
