"""A real ``trendbot run`` installed by OAuth in two workspaces: no token, code, state or
secret appears in its log, at DEBUG, nor in that of a ``broadcast`` sent to both."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from cryptography.fernet import Fernet

from tests.fakes.slack_api import FakeSlack, signed_headers, slash_command_body
from tests.integration.test_ops import start_run, wait_healthy
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
SIGNING_SECRET = "signing-secret-for-leak-test-0123"
STATE_SECRET = "state-secret-for-leak-test-456789"
TOKEN_KEY = Fernet.generate_key().decode()
TEAMS = {"TA1": "CA1", "TB2": "CB2"}


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_no_token_or_secret_in_the_log_of_a_real_run(
    tmp_path: Path, clean_env: dict[str, str], database_url: str
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with FakeSlack() as sl, httpx.AsyncClient(timeout=20) as client:
        sl.token_rotation = True
        for team, channel in TEAMS.items():
            sl.add_workspace(team)
            sl.add_channel(channel, team_id=team)
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=str(ROOT / "bot" / "sample_wiki"),
            SLACK_CLIENT_ID=sl.client_id,
            SLACK_CLIENT_SECRET=sl.client_secret,
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_STATE_SECRET=STATE_SECRET,
            SLACK_TOKEN_KEY=TOKEN_KEY,
            SLACK_API_BASE_URL=sl.base_url,
            HTTP_PORT=str(port),
            POLL_INTERVAL_SECONDS="3600",
            LOG_LEVEL="DEBUG",
        )
        process = start_run(env, tmp_path)
        seen: list[str] = []  # every code and state handed out
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            for team, channel in TEAMS.items():
                sl.token_lifetime_seconds = 3600  # refreshed at the first use
                page = await client.get(f"{base}/slack/install")
                assert page.status_code == 200
                link = re.findall(r'href="([^"]+)"', page.text)[0].replace("&amp;", "&")
                state = parse_qs(urlsplit(link).query)["state"][0]
                cookie = page.headers["set-cookie"].split(";", 1)[0]
                code = sl.authorize(team, user_id=f"UADMIN{team}")
                seen += [state, code]
                done = await client.get(
                    f"{base}/slack/oauth_redirect",
                    params={"code": code, "state": state},
                    headers={"Cookie": cookie},
                )
                assert done.status_code == 200, done.text
                sl.token_lifetime_seconds = 13 * 3600  # what the refresh gives lasts
                body = slash_command_body(
                    "/trend",
                    "subscribe *",
                    user_id="U1",
                    channel_id=channel,
                    team_id=team,
                    response_url=sl.response_url(team),
                )
                answer = await client.post(
                    f"{base}/slack/events",
                    content=body,
                    headers=signed_headers(SIGNING_SECRET, body),
                )
                assert answer.status_code == 200
            # A replayed state, and a code Slack refuses: the error paths log too.
            replay = await client.get(
                f"{base}/slack/oauth_redirect",
                params={"code": seen[-1], "state": seen[-2]},
                headers={"Cookie": f"slack-app-oauth-state={seen[-2]}"},
            )
            assert replay.status_code == 401
            digest = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "bot", "broadcast", "--text", "Hello", "--yes"],
                env=env,
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert digest.returncode == 0, digest.stderr
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)
        posts = sl.calls("chat.postMessage", ok=True)
        assert {c.channel for c in posts} == set(TEAMS.values())
        assert [c for c in sl.calls("oauth.v2.access") if c.refreshed]  # rotation happened

        secrets = {
            sl.client_secret,
            SIGNING_SECRET,
            STATE_SECRET,
            TOKEN_KEY,
            *sl.tokens,
            *sl.refresh_issued,
            *seen,
        }
        for team in TEAMS:
            secrets.update(sl.tokens_of(team))
        log = (tmp_path / "err.log").read_text() + (tmp_path / "out.log").read_text()
        log += digest.stdout + digest.stderr
        assert "DEBUG" in log  # the level that logs the most was on
        leaked = sorted(s for s in secrets if s and s in log)
        assert leaked == []
