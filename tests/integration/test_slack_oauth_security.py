"""Slack's OAuth install under attack: what a caller puts in the install link, floods of
install pages, and tokens that no configured key opens.

The deployment is the real one of ``test_slack_oauth`` (``open_app`` with Bolt's OAuth flow
on each database, against FakeSlack).
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.slack_oauth import StateStore
from bot.store.schema import slack_installations, slack_oauth_states
from tests.fakes.slack_api import FakeSlack
from tests.integration.test_slack_oauth import (
    CHANNEL_A,
    CHANNEL_B,
    TEAM_A,
    TEAM_B,
    Deployment,
    deployment,
)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.add_workspace(TEAM_A, name="Team A")
        server.add_workspace(TEAM_B, name="Team B")
        server.add_channel(CHANNEL_A, name="research", team_id=TEAM_A)
        server.add_channel(CHANNEL_B, name="papers", team_id=TEAM_B)
        yield server


async def install_link(d: Deployment, raw_query: str) -> tuple[int, str]:
    """``GET /slack/install?raw_query`` (sent as written): status and the Add to Slack link."""
    async with d.browser.get(f"{d.base}/slack/install?{raw_query}") as response:
        text = await response.text()
    links = re.findall(r'href="([^"]+)"', text)
    return response.status, html.unescape(links[0]) if links else ""


# ---------------------------------------------------------------------- the team parameter


@pytest.mark.parametrize(
    "raw_query",
    [
        "team=T1%26redirect_uri%3Dhttps%3A%2F%2Fevil.example%2Fcb",
        "team=T1%26scope%3Dadmin",
        "team=T1%23x",
        "team=T1%20&x=1",
        "team=U0123",
        "team=",
        "team=T" + "1" * 40,
        "team=T%C3%A91",
        "team=T1&team=T2",
    ],
    ids=["redirect", "scope", "fragment", "space", "user-id", "empty", "long", "accent", "twice"],
)
async def test_a_team_that_is_not_a_team_id_is_left_out_of_the_link(
    slack: FakeSlack, database_url: str, tmp_path: Path, raw_query: str
) -> None:
    async with deployment(
        slack, database_url, tmp_path, public_base_url="https://bot.example.org"
    ) as d:
        status, link = await install_link(d, raw_query)
    assert status == 200
    query = parse_qs(urlsplit(link).query, keep_blank_values=True)
    assert "team" not in query
    assert "evil" not in link and "admin" not in link and "#" not in link
    assert query["redirect_uri"] == ["https://bot.example.org/slack/oauth_redirect"]
    assert sorted(query) == ["client_id", "redirect_uri", "scope", "state", "user_scope"]


async def test_a_team_id_preselects_the_workspace(
    slack: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    async with deployment(slack, database_url, tmp_path) as d:
        status, link = await install_link(d, "team=T0123ABC")
    assert status == 200
    assert parse_qs(urlsplit(link).query)["team"] == ["T0123ABC"]


# ---------------------------------------------------------------------- install-state flood

# Install pages opened by the flood in the tests; the issue measured 5,000 in 13 s.
FLOOD = 500


async def _states_stored(d: Deployment) -> int:
    async with d.app.engine.connect() as conn:
        return int(
            (await conn.execute(select(func.count()).select_from(slack_oauth_states))).scalar_one()
        )


async def test_a_flood_of_install_pages_stores_nothing_and_pushes_out_no_installer(
    slack: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    async with deployment(slack, database_url, tmp_path) as d:
        _, _, query = await d.install_page()  # a real installer, before the flood
        state, cookie = query["state"][0], d.cookie
        for _ in range(FLOOD // 50):
            answers = await asyncio.gather(
                *(d.browser.get(f"{d.base}/slack/install") for _ in range(50))
            )
            assert {a.status for a in answers} == {200}
            for answer in answers:
                answer.release()
        flooded = await _states_stored(d)
        status, _ = await d.redirect(
            code=slack.authorize(TEAM_A, user_id="UADMINA"), state=state, cookie=cookie
        )
        used = await _states_stored(d)
    assert flooded == 0
    assert status == 200  # the installer's state still works after the flood
    assert used == 1  # its use is recorded, so that it works once


async def test_a_forged_state_with_its_cookie_is_refused_before_any_exchange(
    slack: FakeSlack, database_url: str, tmp_path: Path
) -> None:
    """A state of the right shape whose signature is not the bot's: the attacker controls
    both the link and a cookie of the same value, and still installs nothing."""
    async with deployment(slack, database_url, tmp_path) as d:
        _, _, query = await d.install_page()
        genuine = query["state"][0]
        expires, nonce, _ = genuine.split(".")
        forged = [
            f"{expires}.{nonce}.{'A' * 43}",  # a signature made up
            f"{int(expires) + 3600}.{nonce}.{genuine.split('.')[2]}",  # longer life, old MAC
            f"{expires}.{'B' * 22}.{genuine.split('.')[2]}",  # another nonce, old MAC
        ]
        answers = [
            await d.redirect(
                code=slack.authorize(TEAM_A, user_id="UADMINA"),
                state=state,
                cookie=f"slack-app-oauth-state={state}",
            )
            for state in forged
        ]
        async with d.app.engine.connect() as conn:
            rows = (await conn.execute(select(slack_installations))).all()
    assert [status for status, _ in answers] == [401, 401, 401]
    assert rows == []
    assert slack.calls("oauth.v2.access") == []


async def test_used_states_are_remembered_within_a_bound(engine: AsyncEngine) -> None:
    states = StateStore(engine=engine, secret="state-secret-0123456789abcdef", max_used=3)
    issued = [await states.async_issue() for _ in range(5)]
    assert [await states.async_consume(state) for state in issued] == [True] * 5
    async with engine.connect() as conn:
        kept = (await conn.execute(select(func.count()).select_from(slack_oauth_states))).scalar()
    assert kept == 3
    assert await states.async_consume(issued[-1]) is False  # the newest still work once


@pytest.mark.parametrize(
    "variant",
    [
        lambda s: s + "\n",
        lambda s: " " + s,
        lambda s: s.upper(),
        lambda s: s + "=",
        lambda s: s.replace(".", "..", 1),
        lambda s: "0" + s,
        lambda s: s[:-1] + ("B" if s[-1] != "B" else "C"),
    ],
    ids=["newline", "space", "upper", "padding", "dots", "leading-zero", "last-char"],
)
async def test_a_state_changed_in_any_way_is_refused(engine: AsyncEngine, variant: Any) -> None:
    """Only the exact state issued works: a variant that still carries a valid signature
    (a trailing newline, a leading zero) would otherwise be a second use of one state."""
    states = StateStore(engine=engine, secret="state-secret-0123456789abcdef")
    state = await states.async_issue()
    assert await states.async_consume(variant(state)) is False
    assert await states.async_consume(state) is True
