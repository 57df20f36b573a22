"""The reverse-proxy example of ``deploy/Caddyfile`` in front of a real ``trendbot run``.

Caddy runs the file as shipped, with the site address given as a plain ``http://`` one on
the loopback (``TRENDBOT_HOST``): a certificate cannot be had here, and TLS is Caddy's own
business; what the test checks is the bot's side of the file. Telegram's webhook reaches
the bot through it, and the paths that stay private (``/metrics``, ``/healthz``) do not.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.cli import start_cli
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import wait_healthy
from tests.ports import free_port
from tests.run_env import telegram_env
from tests.waiting import wait_until

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
    async def listening() -> bool:
        assert caddy.poll() is None, "caddy exited"
        try:
            await client.get(url)
        except httpx.TransportError:
            return False
        return True

    await wait_until(listening, what="caddy to listen")


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
        "WIKI_SOURCES": str(ROOT / "bot" / "sample_wiki"),
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


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_slack_workspace_installs_by_oauth_through_the_caddyfile(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """The Slack page's OAuth steps, in their order, with Caddy in front: the install page
    and Slack's redirect reach the bot through the proxy, then a slash command does."""
    from urllib.parse import parse_qs, urlsplit

    from cryptography.fernet import Fernet

    from tests.fakes.slack_api import FakeSlack, signed_headers, slash_command_body

    signing_secret = "proxy-signing-secret-0123456789"
    bot_port, proxy_port = free_port(), free_port()
    proxy = f"http://127.0.0.1:{proxy_port}"
    async with FakeSlack() as sl, httpx.AsyncClient(timeout=30) as client:
        sl.add_workspace("TPROXY1")
        sl.add_channel("CPROXY1", team_id="TPROXY1")
        env = dict(
            clean_env,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/db.sqlite",
            WIKI_SOURCES=str(ROOT / "bot" / "sample_wiki"),
            SLACK_CLIENT_ID=sl.client_id,
            SLACK_CLIENT_SECRET=sl.client_secret,
            SLACK_SIGNING_SECRET=signing_secret,
            SLACK_STATE_SECRET="proxy-state-secret-0123456789",
            SLACK_TOKEN_KEY=Fernet.generate_key().decode(),
            SLACK_API_BASE_URL=sl.base_url,
            PUBLIC_BASE_URL=proxy,  # what Slack is told: the proxy's address
            HTTP_HOST="127.0.0.1",
            HTTP_PORT=str(bot_port),
            POLL_INTERVAL_SECONDS="3600",
        )
        bot = start_cli(env=env, cwd=tmp_path, out=tmp_path / "run.log", err=tmp_path / "run.log")
        caddy = _start_caddy(
            {
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path),
                "XDG_DATA_HOME": str(tmp_path / "caddy-data"),
                "XDG_CONFIG_HOME": str(tmp_path / "caddy-config"),
                "TRENDBOT_HOST": proxy,
                "TRENDBOT_PORT": str(bot_port),
            },
            tmp_path / "caddy.log",
        )
        try:
            await wait_healthy(client, f"http://127.0.0.1:{bot_port}/healthz", bot)
            await _wait_for_proxy(client, f"{proxy}/", caddy)
            page = await client.get(f"{proxy}/slack/install")
            assert page.status_code == 200
            link = re.findall(r'href="([^"]+)"', page.text)[0].replace("&amp;", "&")
            query = parse_qs(urlsplit(link).query)
            assert query["redirect_uri"] == [f"{proxy}/slack/oauth_redirect"]
            cookie = page.headers["set-cookie"].split(";", 1)[0]
            code = sl.authorize("TPROXY1", user_id="UINSTALLER")
            done = await client.get(
                f"{proxy}/slack/oauth_redirect",
                params={"code": code, "state": query["state"][0]},
                headers={"Cookie": cookie},
            )
            assert done.status_code == 200, done.text
            body = slash_command_body(
                "/trend",
                "subscribe rl",
                user_id="U1",
                channel_id="CPROXY1",
                team_id="TPROXY1",
                response_url=sl.response_url("r1"),
            )
            answer = await client.post(
                f"{proxy}/slack/events", content=body, headers=signed_headers(signing_secret, body)
            )
            assert answer.status_code == 200
            # A quick command is answered in the acknowledgement itself (Bolt's convention).
            assert "any of rl" in answer.text
        finally:
            caddy.send_signal(signal.SIGTERM)
            bot.send_signal(signal.SIGTERM)
            await asyncio.to_thread(caddy.wait, 30)
            await asyncio.to_thread(bot.wait, 60)
    assert bot.returncode == 0, (tmp_path / "run.log").read_text()[-3000:]
