"""``POST /hooks/refresh`` of a real ``trendbot run``: a signed push polls the git wiki at
once, so an instant-mode chat gets a new page seconds after it is pushed; unsigned,
badly signed and replayed requests change nothing."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.fakes.git_server import GitServer, Wiki
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import start_run, wait_healthy
from tests.ports import free_port
from tests.run_env import telegram_env

TOKEN = "123456789:AAHrefreshTokenForTests_0123456789abcd"
SECRET = "push-hook-Secret-0123456789"


def page(title: str) -> str:
    return f"---\ntitle: {title}\ntags: [rl]\n---\n\n## TL;DR\n\n{title} in short.\n"


def signed(body: bytes, secret: str = SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={digest}", "Content-Type": "application/json"}


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.2) as server:
        yield server


@contextlib.asynccontextmanager
async def running(
    tg: FakeTelegram, tmp_path: Path, clean_env: dict[str, str]
) -> AsyncIterator[tuple[Wiki, GitServer, httpx.AsyncClient, str, subprocess.Popen[bytes]]]:
    """A ``trendbot run`` polling a git wiki hourly, with the push hook, and an instant-mode
    chat (1001, following ``rl``) that has had its two replies: the wiki, its server, an
    HTTP client, the run's base URL and its process, stopped with SIGTERM at the end."""
    root = tmp_path / "server"
    root.mkdir()
    wiki = Wiki(root, tmp_path / "work")
    wiki.write("wiki/first.md", page("First"))
    wiki.commit("first")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with GitServer(root) as git, httpx.AsyncClient(timeout=30) as client:
        env = dict(
            clean_env,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/data/db.sqlite",
            WIKI_SOURCES=f"git+{git.base_url}/wiki.git@main#subdirectory=wiki",
            POLL_INTERVAL_SECONDS="3600",
            REFRESH_WEBHOOK_SECRET=SECRET,
            HTTP_PORT=str(port),
            PTB_TIMEDELTA="true",
            **telegram_env(tg),
        )
        process = start_run(env, tmp_path)
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            tg.message(1001, "/subscribe rl")
            tg.message(1001, "/mode instant")
            await tg.wait_for(2, timeout=30)
            yield wiki, git, client, base, process
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_signed_push_brings_the_page_to_an_instant_chat_in_seconds(
    tg: FakeTelegram, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    async with running(tg, tmp_path, clean_env) as (wiki, git, client, base, process):
        fetches = sum(r.startswith("GET ") and "info/refs" in r for r in git.requests)

        wiki.write("wiki/second.md", page("Second"))
        wiki.commit("second")
        body = b'{"ref": "refs/heads/main", "after": "abc"}'
        assert (await client.post(f"{base}/hooks/refresh", content=body)).status_code == 401
        forged = signed(body, "not-the-secret")
        refused = await client.post(f"{base}/hooks/refresh", content=body, headers=forged)
        assert refused.status_code == 401
        pushed = asyncio.get_running_loop().time()
        # Three pushes within a second make one poll; the second is a replay.
        for n, payload in enumerate((body, body, body.replace(b"abc", b"def"))):
            answer = await client.post(
                f"{base}/hooks/refresh", content=payload, headers=signed(payload)
            )
            assert answer.status_code == 202, n
        await tg.wait_for(3, timeout=20)
        seconds = asyncio.get_running_loop().time() - pushed
        texts = [m["text"] for m in tg.messages_to(1001)]
        assert "Second" in texts[-1]
        assert seconds < 10  # not the hour of POLL_INTERVAL_SECONDS
        await asyncio.sleep(2.5)  # past the debounce: no second poll follows
        # A fetch starts with one GET of info/refs (git's smart HTTP): one poll.
        polls = sum(r.startswith("GET ") and "info/refs" in r for r in git.requests)
        assert polls - fetches == 1
    log = (tmp_path / "err.log").read_text()
    assert process.returncode == 0, log[-2000:]
    assert SECRET not in log and "Traceback" not in log
    # Two refused within the minute: one line, counting the first (the next line, a
    # minute on at the earliest, would count the second).
    refused_lines = [line for line in log.splitlines() if "refresh hook: unsigned" in line]
    assert len(refused_lines) == 1, refused_lines
    assert refused_lines[0].endswith("(1 since the last such line)")


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_push_during_a_poll_brings_another_poll_after_it(
    tg: FakeTelegram, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """The poll under way read the source's refs before the push: the page pushed comes
    with a poll right after it, not an hour later."""
    async with running(tg, tmp_path, clean_env) as (wiki, git, client, base, process):
        release = git.hold_packs = asyncio.Event()
        wiki.write("wiki/second.md", page("Second"))
        wiki.commit("second")
        body = b'{"ref": "refs/heads/main", "after": "second"}'
        answer = await client.post(f"{base}/hooks/refresh", content=body, headers=signed(body))
        assert answer.status_code == 202
        await asyncio.wait_for(git.pack_held.wait(), timeout=20)  # the poll has the refs
        wiki.write("wiki/third.md", page("Third"))
        wiki.commit("third")
        body = b'{"ref": "refs/heads/main", "after": "third"}'
        answer = await client.post(f"{base}/hooks/refresh", content=body, headers=signed(body))
        assert answer.status_code == 202
        await asyncio.sleep(2)  # the push is taken while the poll waits
        git.hold_packs = None
        release.set()
        await tg.wait_for(4, timeout=30)
        texts = [m["text"] for m in tg.messages_to(1001)]
        assert "Second" in texts[2] and "Third" not in texts[2]
        assert "Third" in texts[3]
    log = (tmp_path / "err.log").read_text()
    assert process.returncode == 0, log[-2000:]
    assert "Traceback" not in log and "maximum number of running instances" not in log


@pytest.mark.slow
@pytest.mark.timeout(60)
async def test_without_the_secret_there_is_no_hook(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    port = free_port()
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/db.sqlite",
        HTTP_PORT=str(port),
        POLL_INTERVAL_SECONDS="3600",
    )
    process = start_run(env, tmp_path)
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            await wait_healthy(client, f"http://127.0.0.1:{port}/healthz", process)
            body = b"{}"
            answer = await client.post(
                f"http://127.0.0.1:{port}/hooks/refresh", content=body, headers=signed(body)
            )
            assert answer.status_code == 404
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.to_thread(process.wait, 60)


async def test_unsigned_requests_fill_no_log(caplog: pytest.LogCaptureFixture) -> None:
    """Anyone may post to the hook: fifty refusals in a row are one WARNING line, with the
    count (the next line comes a minute later at the earliest)."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from bot.ops import web
    from bot.ops.refresh import Refresh

    engine = create_async_engine("sqlite+aiosqlite://")
    refresh = Refresh(engine=engine, secret=SECRET, holder="test")
    hooks = web.WebHooks()
    hooks.refresh = refresh.hook
    runner, port = await web.start(
        web.make_app(engine=engine, hooks=hooks), host="127.0.0.1", port=0
    )
    body = b'{"ref": "refs/heads/main"}'
    try:
        with caplog.at_level(logging.INFO):
            async with httpx.AsyncClient(timeout=30) as client:
                for n in range(50):
                    headers = signed(body, "not-the-secret") if n % 2 else {}
                    answer = await client.post(
                        f"http://127.0.0.1:{port}/hooks/refresh", content=body, headers=headers
                    )
                    assert answer.status_code == 401
    finally:
        await runner.cleanup()
        await engine.dispose()
    lines = [r.getMessage() for r in caplog.records if "refresh hook" in r.getMessage()]
    assert lines == [
        "refresh hook: unsigned or badly signed requests refused (1 since the last such line)"
    ]
