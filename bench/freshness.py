"""Freshness: from a push to the wiki to the instant message in a chat.

A real ``trendbot run`` (SQLite, Telegram through the local Bot API server, the wiki a git
repository served over git's smart HTTP on 127.0.0.1) with one chat in instant mode. Each
round commits a new page, pushes it, and posts the signed ``POST /hooks/refresh`` a Git host
would send; the time is taken from the push to the message arriving at the Bot API server.
Polling alone would take half of ``POLL_INTERVAL_SECONDS`` on average (450 s at the
default 900 s): that is the reference printed beside the figures.

    .venv/bin/python bench/freshness.py [--pushes 50]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from tests.cli import start_cli
from tests.fakes.git_server import GitServer, Wiki
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import free_port, wait_healthy
from tests.run_env import telegram_env

TOKEN = "123456789:AAHfreshnessBenchToken_0123456789abcd"
SECRET = "freshness-bench-secret-0123456789"
DEFAULT_POLL_INTERVAL = 900  # POLL_INTERVAL_SECONDS' default: polling alone waits half


def page(n: int) -> str:
    return f"---\ntitle: Pushed page {n}\ntags: [rl]\n---\n\n## TL;DR\n\nPage {n}.\n"


def signed(body: bytes) -> dict[str, str]:
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={digest}", "Content-Type": "application/json"}


async def measure(pushes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        root = tmp / "server"
        root.mkdir()
        wiki = Wiki(root, tmp / "work")
        wiki.write("wiki/first.md", page(0))
        wiki.commit("first")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        async with (
            FakeTelegram(token=TOKEN, long_poll_cap=0.2) as tg,
            GitServer(root) as git,
            httpx.AsyncClient(timeout=30) as client,
        ):
            tg.enforce_limits = True  # Telegram's flood limits (Bot API FAQ), counted exactly
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/data/db.sqlite",
                "WIKI_SOURCES": f"git+{git.base_url}/wiki.git@main#subdirectory=wiki",
                "POLL_INTERVAL_SECONDS": str(DEFAULT_POLL_INTERVAL),
                "REFRESH_WEBHOOK_SECRET": SECRET,
                "HTTP_PORT": str(port),
                "PTB_TIMEDELTA": "true",
                **telegram_env(tg),
            }
            process = start_cli(env=env, cwd=tmp, out=tmp / "run.log", err=tmp / "run.log")
            try:
                await wait_healthy(client, f"{base}/healthz", process)
                tg.message(1001, "/subscribe rl")
                tg.message(1001, "/mode instant")
                await tg.wait_for(2, timeout=30)
                seconds: list[float] = []
                for n in range(1, pushes + 1):
                    before = len(tg.messages_to(1001))
                    wiki.write(f"wiki/page-{n}.md", page(n))
                    started = time.perf_counter()
                    commit = await asyncio.to_thread(wiki.commit, f"page {n}")
                    body = f'{{"ref": "refs/heads/main", "after": "{commit}"}}'.encode()
                    answer = await client.post(
                        f"{base}/hooks/refresh", content=body, headers=signed(body)
                    )
                    assert answer.status_code == 202, answer.status_code
                    await tg.wait_for(
                        lambda _call, before=before: len(tg.messages_to(1001)) > before,
                        timeout=60,
                    )
                    seconds.append(time.perf_counter() - started)
                    await asyncio.sleep(1.2)  # past the debounce: each push its own poll
            except BaseException:
                print((tmp / "run.log").read_text()[-4000:], file=sys.stderr)
                raise
            finally:
                process.send_signal(signal.SIGTERM)
                await asyncio.to_thread(process.wait, 60)
            refused = tg.stats()["rate_limited"]
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
    print(f"load average {os.getloadavg()[0]:.2f}; {pushes} pushes; {refused} 429s")
    print("| path | p50 | p95 | max |")
    print("| --- | --- | --- | --- |")
    print(
        f"| push -> refresh hook -> poll -> instant message | {statistics.median(seconds):.2f} s "
        f"| {p95:.2f} s | {max(seconds):.2f} s |"
    )
    print(
        f"| polling alone (reference: half of {DEFAULT_POLL_INTERVAL} s) | "
        f"{DEFAULT_POLL_INTERVAL / 2:.0f} s | | |"
    )
    print(
        f"machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {len(os.sched_getaffinity(0))} cores"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pushes", type=int, default=50, help="pushes to time (at least 1)")
    args = parser.parse_args()
    if args.pushes < 1:
        parser.error(f"--pushes must be 1 or more, not {args.pushes}")
    asyncio.run(measure(args.pushes))


if __name__ == "__main__":
    main()
