"""Who is admin of what, with Slack installed by OAuth in two workspaces: the deployment's
admins (``SLACK_ADMIN_IDS`` as ``TEAM:USER``) see the sources, the pages and the queue and
are told of incidents; a workspace's installer sees that workspace's chats and deliveries
only, and is told, not promised, that operator alerts are not theirs.

The deployment is the real one of ``tests/integration/test_slack_oauth.py`` (``open_app``,
Bolt's OAuth flow, FakeSlack as every workspace's Web API), on each database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.i18n import t
from bot.ops.alert_service import AlertService
from bot.store import alerts as alert_store
from bot.store.schema import audit_log
from tests.cli import run_cli
from tests.fakes.slack_api import FakeSlack
from tests.integration.test_slack_oauth import (
    CHANNEL_A,
    CHANNEL_B,
    INSTALLER_A,
    INSTALLER_B,
    SIGNING_SECRET,
    STATE_SECRET,
    TEAM_A,
    TEAM_B,
    TOKEN_KEY,
    Deployment,
    deployment,
)
from tests.integration.test_slack_oauth import sl as sl  # the fixtures
from tests.integration.test_slack_oauth import two as two

OPERATOR = "UOPS1"  # a deployment admin, whose user is in workspace A


@pytest.fixture
async def ops(sl: FakeSlack, database_url: str, tmp_path: Path) -> AsyncIterator[Deployment]:
    """Both workspaces installed, and ``TEAM_A:OPERATOR`` a deployment admin."""
    async with deployment(
        sl, database_url, tmp_path, slack_admin_ids=(f"{TEAM_A}:{OPERATOR}",)
    ) as d:
        assert (await d.install(TEAM_A, installer=INSTALLER_A))[0] == 200
        assert (await d.install(TEAM_B, installer=INSTALLER_B))[0] == 200
        await d.command("subscribe rl", team=TEAM_A, channel=CHANNEL_A, user="UA1")
        await d.command("subscribe robotics", team=TEAM_B, channel=CHANNEL_B, user="UB1")
        yield d


async def test_a_workspace_admin_sees_that_workspace_and_no_deployment_fact(
    two: Deployment,
) -> None:
    mine = await two.command("stats", team=TEAM_A, channel=CHANNEL_A, user=INSTALLER_A)

    assert mine.startswith(t("en", "admin.stats.header"))
    assert t("en", "admin.stats.workspace_only", workspace=TEAM_A) in mine
    assert "Chats: Slack 1 active" in mine
    assert str(two.wiki) not in mine and "Source " not in mine  # no source
    assert "Pages in the wiki" not in mine


async def test_a_deployment_admin_sees_every_workspace_the_pages_and_the_sources(
    ops: Deployment,
) -> None:
    operator = await ops.command("stats", team=TEAM_A, channel=CHANNEL_A, user=OPERATOR)
    assert "Chats: Slack 2 active" in operator
    assert f"Source {ops.wiki}: last poll " in operator
    assert "Pages in the wiki: 1 page" in operator
    assert t("en", "admin.stats.workspace_only", workspace=TEAM_A) not in operator


async def test_a_team_user_entry_is_an_admin_in_its_workspace_only(ops: Deployment) -> None:
    """``TA1:UOPS1`` names a user of workspace A; the same user id sent from B is nobody."""
    elsewhere = await ops.command("stats", team=TEAM_B, channel=CHANNEL_B, user=OPERATOR)
    assert elsewhere == t("en", "cmd.admins_only")


async def test_a_workspace_admins_alerts_on_is_refused_with_the_reason(two: Deployment) -> None:
    two.sl.add_channel(two.sl.im_channel(INSTALLER_A), user=INSTALLER_A, team_id=TEAM_A)
    dm = two.sl.im_channel(INSTALLER_A)
    reason = t("en", "dest.alerts.none_for_workspace")
    # Asked to turn them on: nothing was changed. Asked for the state: the state alone.
    for text, said in (
        ("alerts on", f"{reason} {t('en', 'dest.alerts.unchanged')}"),
        ("alerts", reason),
    ):
        reply = await two.command(text, team=TEAM_A, channel=dm, user=INSTALLER_A)
        assert reply == said
    async with two.app.engine.connect() as conn:
        assert await alert_store.admin_choices(conn) == {}
        actions = (await conn.execute(select(audit_log.c.action))).scalars().all()
    assert actions.count("alerts.refused") == 2


async def test_a_deployment_admins_alerts_on_is_kept_and_alerts_reach_them(
    ops: Deployment,
) -> None:
    """Confirmed only because it is true: the alert arrives in the operator's DM, sent with
    the token of the workspace their entry names; the installers are told nothing."""
    for user, team in ((OPERATOR, TEAM_A), (INSTALLER_A, TEAM_A), (INSTALLER_B, TEAM_B)):
        ops.sl.add_channel(ops.sl.im_channel(user), user=user, team_id=team)
    dm = ops.sl.im_channel(OPERATOR)
    reply = await ops.command("alerts on", team=TEAM_A, channel=dm, user=OPERATOR)
    assert reply == t("en", "dest.alerts.on", p="/trend ")
    async with ops.app.engine.connect() as conn:
        choices = await alert_store.admin_choices(conn)
    assert list(choices) == [("slack", f"{TEAM_A}:{OPERATOR}")]

    alerts = AlertService(engine=ops.app.engine, settings=ops.app.settings)
    for _ in range(ops.app.settings.alert_source_failures):
        await alerts.after_poll([(str(ops.wiki), "missing directory")])
    (started,) = await alerts.check()
    assert started.started
    await ops.app.delivery().drain()

    (alert,) = [str(m["text"]) for m in ops.sl.messages_to(dm)]
    assert alert == t(
        "en", "dest.alert.start.source", name=str(ops.wiki), count=3, error="missing directory"
    )
    assert ops.sl.messages_to(ops.sl.im_channel(INSTALLER_A)) == []
    assert ops.sl.messages_to(ops.sl.im_channel(INSTALLER_B)) == []


async def test_without_alerts_on_a_deployment_admin_is_told_in_their_workspace(
    ops: Deployment,
) -> None:
    """No command first: the admin's DM is found from their ``TEAM:USER`` entry, and the
    workspace's token posts to it (a bare user id names no workspace to send with)."""
    dm = ops.sl.im_channel(OPERATOR)
    ops.sl.add_channel(dm, user=OPERATOR, team_id=TEAM_A)
    alerts = AlertService(engine=ops.app.engine, settings=ops.app.settings)
    for _ in range(ops.app.settings.alert_source_failures):
        await alerts.after_poll([(str(ops.wiki), "missing directory")])
    assert len(await alerts.check()) == 1
    await ops.app.delivery().drain()
    assert [m["text"][:1] for m in ops.sl.messages_to(dm)] == ["🚨"]


def _oauth_env(clean_env: dict[str, str], sl_base: str, **extra: str) -> dict[str, str]:
    return dict(
        clean_env,
        SLACK_CLIENT_ID="1111.2222",
        SLACK_CLIENT_SECRET="client-secret-0123",
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_STATE_SECRET=STATE_SECRET,
        SLACK_TOKEN_KEY=TOKEN_KEY,
        SLACK_API_BASE_URL=sl_base,
        **extra,
    )


@pytest.mark.parametrize("admins", ["U0456", "T0123:U0456,U0789"])
async def test_a_bare_user_id_with_oauth_is_a_configuration_error(
    admins: str, clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = _oauth_env(
        clean_env,
        "http://127.0.0.1:1/api/",
        SLACK_ADMIN_IDS=admins,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/t.db",
    )
    done = await asyncio.to_thread(run_cli, "poll", env=env, cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("configuration error: SLACK_ADMIN_IDS: ") and "TEAM:USER" in line
    assert not (tmp_path / "t.db").exists()  # refused before anything was done


async def test_team_user_entries_start_with_oauth_and_with_a_bot_token(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    base = dict(
        clean_env, WIKI_SOURCES=str(wiki), DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/t.db"
    )
    oauth = _oauth_env(base, "http://127.0.0.1:1/api/", SLACK_ADMIN_IDS="T0123:U0456")
    token = dict(
        base,
        SLACK_BOT_TOKEN="xoxb-1-test",
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_ADMIN_IDS="T0123:U0456,U0789",
    )
    for env in (oauth, token):
        done = await asyncio.to_thread(run_cli, "poll", env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr


async def test_the_consoles_alerts_on_is_refused_with_the_reason(
    clean_env: dict[str, str], tmp_path: Path
) -> None:
    """Alerts never reach the console: it says so instead of confirming."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    env = dict(
        clean_env, WIKI_SOURCES=str(wiki), DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/t.db"
    )
    done = await asyncio.to_thread(
        run_cli, "console", env=env, cwd=tmp_path, stdin="/alerts on\n/alerts\n/quit\n"
    )
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    reason = t("en", "dest.alerts.none_for_console")
    assert f"{reason} {t('en', 'dest.alerts.unchanged')}" in said
    assert said.count(reason) == 2 and said.count(t("en", "dest.alerts.unchanged")) == 1
    assert t("en", "dest.alerts.on", p="/") not in done.stdout
