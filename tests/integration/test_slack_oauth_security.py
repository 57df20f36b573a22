"""Slack's OAuth install under attack: what a caller puts in the install link, floods of
install pages, and tokens that no configured key opens.

The deployment is the real one of ``test_slack_oauth`` (``open_app`` with Bolt's OAuth flow
on each database, against FakeSlack).
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

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
