"""A real ``trendbot run``: the feed route on its HTTP server and an alert from its first
poll, with Telegram long polling against the local Bot API server."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import feedparser
import httpx
import pytest

from bot.models import ChatSettings, Platform
from bot.store import chats as chat_store
from bot.store.engine import create_engine, upgrade
from tests.cli import start_cli
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import wait_healthy
from tests.integration.test_poll import page, write
from tests.ports import free_port
from tests.run_env import telegram_env
from tests.unit.test_feeds import check_atom

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
ADMIN = 4242
USER = 5151


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_run_serves_feeds_and_alerts_the_admin(
    tmp_path: Path, clean_env: dict[str, str], database_url: str
) -> None:
    wiki = tmp_path / "wiki"
    write(wiki, *page("papers/2026/feed", tags="[rl]"))
    missing = tmp_path / "missing"
    # The admin has a private chat with the bot before the first poll.
    engine = create_engine(database_url)
    await upgrade(engine)
    async with engine.begin() as conn:
        await chat_store.ensure(
            conn, defaults=ChatSettings(platform=Platform.TELEGRAM, chat_id=str(ADMIN))
        )
    await engine.dispose()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with (
        FakeTelegram(token=TOKEN, long_poll_cap=0.2) as tg,
        httpx.AsyncClient(timeout=10) as client,
    ):
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=f"{wiki},{missing}",
            **telegram_env(tg),
            TELEGRAM_ADMIN_IDS=str(ADMIN),
            PUBLIC_BASE_URL=base,
            ALERT_SOURCE_FAILURES="1",
            HTTP_PORT=str(port),
            PTB_TIMEDELTA="true",
            LOG_LEVEL="DEBUG",  # the libraries log every request at DEBUG
        )
        process = start_cli(env=env, cwd=tmp_path, err=tmp_path / "err.log")
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            # The first poll finds the missing directory: one alert, in the admin's chat.
            (alert,) = await tg.wait_for(
                lambda c: c.method == "sendMessage" and c.chat_id == ADMIN, timeout=30
            )
            assert alert.params["text"].startswith("🚨") and str(missing) in alert.params["text"]

            tg.message(USER, "/subscribe rl")
            await tg.wait_for(lambda c: c.method == "sendMessage" and c.chat_id == USER)
            tg.message(USER, "/feed")
            await tg.wait_for(lambda c: c.method == "sendMessage" and c.chat_id == USER, count=2)
            text = str(tg.messages_to(USER)[-1]["text"])
            match = re.search(rf"{re.escape(base)}/feeds/[A-Za-z0-9_-]{{43}}\.atom", text)
            assert match, text
            answer = await client.get(match[0])
            assert answer.status_code == 200
            check_atom(answer.content)
            assert [e.tags[0].term for e in feedparser.parse(answer.content).entries] == ["rl"]
            again = await client.get(match[0], headers={"If-None-Match": answer.headers["ETag"]})
            assert again.status_code == 304
            assert (await client.get(f"{base}/feeds/{'x' * 43}.atom")).status_code == 404
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 30)
        logged = (tmp_path / "err.log").read_text()
        assert process.returncode == 0, logged
        # The feed address is a secret: not in the logs, at DEBUG either.
        assert match[0].rsplit("/", 1)[1].removesuffix(".atom") not in logged
        # One incident, one message: nothing more was sent to the admin.
        assert len([c for c in tg.calls("sendMessage") if c.chat_id == ADMIN]) == 1
