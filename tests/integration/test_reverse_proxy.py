"""The reverse-proxy example of ``deploy/Caddyfile`` in front of a real ``trendbot run``.

Caddy runs the file as shipped, with the site address given as a plain ``http://`` one on
the loopback (``TRENDBOT_HOST``): a certificate cannot be had here, and TLS is Caddy's own
business; what the test checks is the bot's side of the file. Telegram's webhook reaches
the bot through it, and the paths that stay private (``/metrics``, ``/healthz``) do not.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.cli import start_cli
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import free_port, wait_healthy
from tests.run_env import telegram_env

ROOT = Path(__file__).resolve().parent.parent.parent
CADDYFILE = ROOT / "deploy" / "Caddyfile"
TOKEN = "123456789:AAHproxyTokenForTests_0123456789abcdef"
SECRET = "proxy-Secret_for_tests"

pytestmark = pytest.mark.skipif(
    shutil.which("caddy") is None,
    reason="caddy is not installed (apt-get install caddy); .ci/run installs it",
)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TOKEN, long_poll_cap=0.2) as server:
        yield server


def _start_caddy(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            ["caddy", "run", "--config", str(CADDYFILE), "--adapter", "caddyfile"],
            env=env,
            stdout=out,
            stderr=out,
        )


async def _wait_for_proxy(
    client: httpx.AsyncClient, url: str, caddy: subprocess.Popen[bytes]
) -> None:
    for _ in range(200):
        assert caddy.poll() is None, "caddy exited"
        try:
            await client.get(url)
            return
        except httpx.TransportError:
            await asyncio.sleep(0.1)
    raise AssertionError("caddy did not start listening")


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_the_caddyfile_passes_webhooks_to_run_and_keeps_metrics_private(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    bot_port, proxy_port = free_port(), free_port()
    err_path = tmp_path / "run.log"
    env = {
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/db.sqlite",
        "WIKI_SOURCES": str(ROOT / "examples" / "wiki"),
        **telegram_env(tg, webhook_secret=SECRET),
        "HTTP_HOST": "127.0.0.1",
        "HTTP_PORT": str(bot_port),
        "POLL_INTERVAL_SECONDS": "3600",
        "PTB_TIMEDELTA": "true",
    }
    bot = start_cli(env=env, cwd=tmp_path, out=err_path, err=err_path)
    caddy_env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "caddy-data"),
        "XDG_CONFIG_HOME": str(tmp_path / "caddy-config"),
        "TRENDBOT_HOST": f"http://127.0.0.1:{proxy_port}",
        "TRENDBOT_PORT": str(bot_port),
    }
    caddy = _start_caddy(caddy_env, tmp_path / "caddy.log")
    proxy = f"http://127.0.0.1:{proxy_port}"
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            await wait_healthy(client, f"http://127.0.0.1:{bot_port}/healthz", bot)
            await _wait_for_proxy(client, f"{proxy}/", caddy)
            update = json.dumps(tg.message(1001, "/subscribe rl")).encode()
            headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
            answer = await client.post(f"{proxy}/telegram/webhook", content=update, headers=headers)
            assert answer.status_code == 200
            forged = await client.post(f"{proxy}/telegram/webhook", content=update)
            assert forged.status_code == 401  # the bot's own check, through the proxy
            await tg.wait_for(1)
            for private in ("/metrics", "/healthz"):
                assert (await client.get(f"{proxy}{private}")).status_code == 404, private
            assert (await client.get(f"{proxy}/feeds/unknown.atom")).status_code == 404
            oversized = await client.post(
                f"{proxy}/telegram/webhook", content=b"x" * (2 * 1024 * 1024), headers=headers
            )
            assert oversized.status_code == 413  # the bot's own bound (MAX_BODY_BYTES)
    finally:
        caddy.send_signal(signal.SIGTERM)
        bot.send_signal(signal.SIGTERM)
        caddy.wait(timeout=30)
        bot.wait(timeout=60)
    texts = [m["text"] for m in tg.messages_to(1001)]
    assert len(texts) == 1 and "any of rl" in texts[0], texts
    assert bot.returncode == 0, err_path.read_text()[-3000:]
