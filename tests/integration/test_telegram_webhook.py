"""Telegram webhook mode through a real ``trendbot run`` over HTTP: a forged or repeated
update, malformed bodies, and the configuration that makes the webhook safe."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import create_async_engine

from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.client import make_bot
from bot.commands import CommandCore, Defaults
from bot.settings import SAMPLE_WIKI
from tests.cli import run_cli_async, start_cli
from tests.conftest import Settings
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import wait_healthy
from tests.ports import free_port
from tests.run_env import TELEGRAM_WEBHOOK_URL, telegram_env
from tests.strategies import MALFORMED_UPDATES as MALFORMED

TOKEN = "123456789:AAHwebhookTokenForTests_0123456789abcd"
SECRET = "webhook-Secret_for_tests"


def run_env(tg: FakeTelegram, database_url: str, port: int, **extra: str) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": database_url,
        "WIKI_SOURCES": str(SAMPLE_WIKI),
        **telegram_env(tg, webhook_secret=SECRET),
        "HTTP_PORT": str(port),
        "POLL_INTERVAL_SECONDS": "3600",
        "PTB_TIMEDELTA": "true",
        **extra,
    }


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.2) as server:
        yield server


@pytest.mark.parametrize(
    ("extra", "variable"),
    [
        ({"TELEGRAM_WEBHOOK_SECRET": ""}, "TELEGRAM_WEBHOOK_SECRET"),
        (
            {"TELEGRAM_WEBHOOK_URL": "http://bot.example.org/telegram/webhook"},
            "TELEGRAM_WEBHOOK_URL",
        ),
        ({"TELEGRAM_RATE_PER_SECOND": "100"}, "TELEGRAM_RATE_PER_SECOND"),
    ],
    ids=["no secret", "http", "over 30 unpaid"],
)
async def test_an_unsafe_telegram_configuration_stops_run_with_one_line(
    tg: FakeTelegram, tmp_path: Path, extra: dict[str, str], variable: str
) -> None:
    env = run_env(tg, f"sqlite+aiosqlite:///{tmp_path}/db.sqlite", free_port(), **extra)
    env = {k: v for k, v in env.items() if v}
    result = await run_cli_async("run", env=env, cwd=Path.cwd(), seconds=60)
    output = result.stdout + result.stderr
    assert result.returncode == 2
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"configuration error: {variable}: ")
    assert TOKEN not in output and SECRET not in output
    assert tg.webhook is None and tg.sent == []  # nothing reached Telegram


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_run_answers_malformed_and_repeated_webhooks_without_acting_twice(
    tg: FakeTelegram, tmp_path: Path, database_url: str
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    err_path = tmp_path / "err.log"
    process = start_cli(
        env=run_env(tg, database_url, port), cwd=Path.cwd(), out=err_path, err=err_path
    )
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            await wait_healthy(client, f"{base}/healthz", process)
            assert tg.webhook is not None and tg.webhook["url"] == TELEGRAM_WEBHOOK_URL
            assert tg.webhook["secret_token"] == SECRET

            async def post(body: bytes, secret: str | None = SECRET) -> int:
                headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret else {}
                answer = await client.post(
                    f"{base}/telegram/webhook", content=body, headers=headers
                )
                return answer.status_code

            subscribe = json.dumps(tg.message(1001, "/subscribe rl")).encode()
            assert await post(subscribe, None) == 401
            assert await post(subscribe, "forged") == 401
            for body in MALFORMED:
                assert await post(body) == 400, body[:60]
            assert await post(subscribe) == 200
            assert await post(subscribe) == 200  # Telegram's retry of the same update_id
            settings_ = json.dumps(tg.message(1001, "/settings")).encode()
            assert await post(settings_) == 200
            await tg.wait_for(2)
            assert (await client.get(f"{base}/healthz")).status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    output = err_path.read_text()
    assert process.returncode == 0, output[-3000:]
    texts = [m["text"] for m in tg.messages_to(1001)]
    assert len(texts) == 2, texts
    assert "any of rl" in texts[0] and "Filter: any of rl" in texts[1]
    assert "Traceback" not in output and TOKEN not in output and SECRET not in output
    assert output.count("webhook body is not an update") == len(MALFORMED)


@pytest.fixture(scope="module")
def idle_channel() -> TelegramChannel:
    """A channel that was never started: a webhook it is handed is parsed, then 503."""
    engine = create_async_engine("sqlite+aiosqlite://")
    settings = Settings(
        telegram_bot_token=TOKEN,
        telegram_webhook_url=TELEGRAM_WEBHOOK_URL,
        telegram_webhook_secret=SECRET,
    )
    core = CommandCore(engine=engine, defaults=Defaults())
    return TelegramChannel(settings=settings, core=core, bot=make_bot(settings))


_KEYS = (
    "update_id", "message", "chat", "id", "type", "text", "from", "date", "data",
    "callback_query", "message_id", "entities", "my_chat_member", "x",
)  # fmt: skip
_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(_KEYS), children, max_size=6)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    update=st.fixed_dictionaries({"update_id": st.integers()}, optional={"message": _json}) | _json
)
def test_any_json_body_is_400_or_an_update_never_an_exception(
    idle_channel: TelegramChannel, update: Any
) -> None:
    body = json.dumps(update).encode()
    status = asyncio.run(idle_channel.process_webhook(body, SECRET))
    is_update = isinstance(update, dict) and type(update.get("update_id")) is int
    assert status == 400 or (is_update and status == 503)
