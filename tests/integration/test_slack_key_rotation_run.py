"""``SLACK_TOKEN_KEY`` rotation in a real ``trendbot run``, installed by OAuth, on each database.

The database already holds installations (made through FakeSlack's ``oauth.v2.access``, as an
earlier install would have) encrypted with an old key. The run starts with ``NEW,OLD``: the
stored tokens move to ``NEW`` in the background, and a token that no key opens is reported
(``/healthz``, one ERROR line) and explained to that workspace's users.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.slack.oauth import UNREADABLE_REASON
from bot.i18n import t
from bot.store import installations as store
from bot.store.installations import InstallationRecord, TokenCipher
from bot.store.schema import slack_installations
from tests.fakes.slack_api import FakeSlack, shown_for_command, signed_headers
from tests.integration.test_ops import start_run, wait_healthy
from tests.ports import free_port
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
SIGNING_SECRET = "signing-secret-for-rotation-0123"
STATE_SECRET = "state-secret-for-rotation-456789"
OLD, NEW, LOST = (Fernet.generate_key().decode() for _ in range(3))
TEAMS = {"TA1": "CA1", "TB2": "CB2"}
# How long the background re-encryption may take on a loaded machine before a test gives up.
DEADLINE_SECONDS = 60


async def installed_before(
    engine: AsyncEngine, sl: FakeSlack, team: str, *, key: str
) -> InstallationRecord:
    """The app installed in ``team`` by an earlier run whose first key was ``key``: Slack's
    answer to the code exchange, stored as the project stores it."""
    code = sl.authorize(team, user_id=f"UADMIN{team}")
    answer = await AsyncWebClient(base_url=sl.base_url).oauth_v2_access(
        client_id=sl.client_id, client_secret=sl.client_secret, code=code
    )
    expires_in = answer.get("expires_in")
    record = InstallationRecord(
        enterprise_id=None,
        team_id=team,
        is_enterprise_install=False,
        bot_token=str(answer["access_token"]),
        app_id=answer.get("app_id"),
        team_name=(answer.get("team") or {}).get("name"),
        bot_user_id=answer.get("bot_user_id"),
        bot_scopes=answer.get("scope"),
        bot_refresh_token=answer.get("refresh_token"),
        bot_token_expires_at=(
            store.utcnow() + dt.timedelta(seconds=int(expires_in)) if expires_in else None
        ),
        installer_user_id=f"UADMIN{team}",
    )
    async with engine.begin() as conn:
        await store.save(conn, record, cipher=TokenCipher(key))
    return record


async def stored(engine: AsyncEngine) -> dict[str, tuple[str, str | None]]:
    """Each team's stored ciphertexts: the bot token and the refresh token."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(
                slack_installations.c.team_id,
                slack_installations.c.bot_token,
                slack_installations.c.bot_refresh_token,
            )
        )
        return {row[0]: (row[1], row[2]) for row in rows}


def opens(key: str, ciphertexts: tuple[str, str | None]) -> tuple[str, str | None] | None:
    """The tokens in the clear when ``key`` alone opens both; None otherwise."""
    cipher = TokenCipher(key)
    try:
        token, refresh = ciphertexts
        return cipher.decrypt(token), cipher.decrypt(refresh) if refresh else None
    except store.TokenKeyError:
        return None


@dataclass
class Run:
    sl: FakeSlack
    base: str
    http: httpx.AsyncClient
    process: Popen[bytes]
    tmp_path: Path

    async def post(self, body: bytes) -> tuple[int, str]:
        response = await self.http.post(
            f"{self.base}/slack/events", content=body, headers=signed_headers(SIGNING_SECRET, body)
        )
        return response.status_code, response.text

    async def command(self, text: str, *, team: str, name: str) -> str:
        _, shown = await shown_for_command(
            self.sl,
            self.post,
            text,
            response_name=name,
            user_id="U1",
            channel_id=TEAMS[team],
            team_id=team,
        )
        return str(shown["text"])

    async def health(self) -> dict[str, Any]:
        response = await self.http.get(f"{self.base}/healthz")
        assert response.status_code == 200, response.text
        return dict(response.json())

    def log(self) -> str:
        return (self.tmp_path / "err.log").read_text() + (self.tmp_path / "out.log").read_text()


@asynccontextmanager
async def running(
    sl: FakeSlack, *, database_url: str, key: str, env: dict[str, str], tmp_path: Path
) -> AsyncIterator[Run]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(
        env,
        DATABASE_URL=database_url,
        WIKI_SOURCES=str(ROOT / "bot" / "sample_wiki"),
        SLACK_CLIENT_ID=sl.client_id,
        SLACK_CLIENT_SECRET=sl.client_secret,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_STATE_SECRET=STATE_SECRET,
        SLACK_TOKEN_KEY=key,
        SLACK_API_BASE_URL=sl.base_url,
        HTTP_PORT=str(port),
        POLL_INTERVAL_SECONDS="3600",
    )
    process = start_run(env, tmp_path)
    async with httpx.AsyncClient(timeout=20) as http:
        try:
            await wait_healthy(http, f"{base}/healthz", process)
            yield Run(sl, base, http, process, tmp_path)
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)


@pytest.fixture
async def sl() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.token_rotation = True  # refresh tokens too are stored, and re-encrypted
        for team, channel in TEAMS.items():
            server.add_workspace(team)
            server.add_channel(channel, team_id=team)
        yield server


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_run_with_a_new_first_key_moves_every_stored_token_to_it(
    sl: FakeSlack, engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    before = {team: await installed_before(engine, sl, team, key=OLD) for team in TEAMS}
    assert all(opens(NEW, c) is None for c in (await stored(engine)).values())

    async with running(
        sl, database_url=database_url, key=f"{NEW},{OLD}", env=clean_env, tmp_path=tmp_path
    ) as run:

        async def re_encrypted() -> bool:
            return all(opens(NEW, c) for c in (await stored(engine)).values())

        await wait_until(
            re_encrypted, seconds=DEADLINE_SECONDS, what="the stored tokens re-encrypted"
        )
        health = await run.health()
        shown = await run.command("help", team="TA1", name="help")
        log = run.log()

    now = {team: opens(NEW, c) for team, c in (await stored(engine)).items()}
    assert now == {t_: (r.bot_token, r.bot_refresh_token) for t_, r in before.items()}
    assert health["status"] == "ok"
    assert t("en", "slack.oauth.not_installed") not in shown
    assert "re-encrypted with the first key" in log
    assert " ERROR " not in log and OLD not in log and NEW not in log


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_token_no_key_opens_is_reported_and_explained_to_its_workspace(
    sl: FakeSlack, engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    lost = await installed_before(engine, sl, "TA1", key=LOST)  # a key nobody has any more
    await installed_before(engine, sl, "TB2", key=OLD)

    async with running(
        sl, database_url=database_url, key=f"{NEW},{OLD}", env=clean_env, tmp_path=tmp_path
    ) as run:

        async def reported() -> dict[str, Any] | None:
            health = await run.health()
            return health if health["status"] != "ok" else None

        health = await wait_until(
            reported, seconds=DEADLINE_SECONDS, what="/healthz reporting the workspace"
        )
        shown_lost = await run.command("subscribe rl", team="TA1", name="lost-1")
        shown_again = await run.command("list", team="TA1", name="lost-2")
        shown_ok = await run.command("subscribe rl", team="TB2", name="ok")
        raw_health = json.dumps(await run.health())
        log = run.log()

    assert health["status"] == "degraded"
    assert health["platforms"]["slack"]["status"] == "degraded"
    assert health["platforms"]["slack"]["workspaces"] == [
        {"team": "TA1", "error": UNREADABLE_REASON}
    ]
    for shown in (shown_lost, shown_again):
        assert t("en", "slack.oauth.unreachable") in shown
        assert t("ko", "slack.oauth.unreachable") in shown
        assert t("en", "slack.oauth.not_installed") not in shown
    assert t("en", "slack.oauth.unreachable") not in shown_ok
    assert t("en", "slack.oauth.not_installed") not in shown_ok
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "TA1" in errors[0] and "SLACK_TOKEN_KEY" in errors[0]
    secrets = {OLD, NEW, LOST, lost.bot_token, lost.bot_refresh_token, sl.client_secret}
    assert [s for s in secrets if s and (s in log or s in raw_health)] == []
    # The other workspace's token moved to the first key all the same.
    assert opens(NEW, (await stored(engine))["TB2"]) is not None
