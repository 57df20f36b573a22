"""FakeSlack's OAuth side answers as Slack documents, through slack-sdk unchanged.

https://api.slack.com/methods/oauth.v2.access, https://api.slack.com/authentication/rotation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import FakeSlack


@pytest.fixture
async def sl() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.add_workspace("TA1")
        server.add_workspace("TB2")
        server.add_channel("CA1", team_id="TA1")
        yield server


def client(sl: FakeSlack, token: str | None = None) -> AsyncWebClient:
    return AsyncWebClient(token=token, base_url=sl.base_url, retry_handlers=[])


async def access(sl: FakeSlack, **params: str) -> dict[str, object]:
    response = await client(sl).oauth_v2_access(
        client_id=params.pop("client_id", sl.client_id),
        client_secret=params.pop("client_secret", sl.client_secret),
        **params,  # type: ignore[arg-type]
    )
    return dict(response.data)  # type: ignore[arg-type]


async def error_of(sl: FakeSlack, **params: str) -> str:
    with pytest.raises(SlackApiError) as info:
        await access(sl, **params)
    return str(info.value.response["error"])


async def test_a_code_is_exchanged_once_for_that_workspaces_bot_token(sl: FakeSlack) -> None:
    code = sl.authorize("TA1", user_id="UADMIN")
    answer = await access(sl, code=code)
    assert answer["ok"] is True and answer["token_type"] == "bot"
    assert answer["team"] == {"id": "TA1", "name": "Workspace TA1"}
    assert answer["authed_user"] == {"id": "UADMIN"}
    assert answer["is_enterprise_install"] is False and answer["enterprise"] is None
    token = str(answer["access_token"])
    assert token.startswith("xoxb-") and "refresh_token" not in answer
    assert await error_of(sl, code=code) == "invalid_code"  # used already

    identity = await client(sl, token).auth_test()
    assert (identity["team_id"], identity["user_id"]) == ("TA1", answer["bot_user_id"])


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"client_id": "999.999"}, "invalid_client_id"),
        ({"client_secret": "wrong"}, "bad_client_secret"),
        ({"code": "1.2.3"}, "invalid_code"),
        ({"grant_type": "password"}, "invalid_grant_type"),
        ({"grant_type": "refresh_token", "refresh_token": "xoxe-1-nope"}, "invalid_refresh_token"),
    ],
)
async def test_refusals_name_slacks_error(
    sl: FakeSlack, params: dict[str, str], error: str
) -> None:
    assert await error_of(sl, **params) == error


async def test_a_redirect_uri_given_when_authorizing_must_match(sl: FakeSlack) -> None:
    code = sl.authorize("TA1", redirect_uri="https://bot.example.org/slack/oauth_redirect")
    assert await error_of(sl, code=code, redirect_uri="https://evil.example") == "bad_redirect_uri"


async def test_another_workspaces_token_does_not_see_the_channel(sl: FakeSlack) -> None:
    token = str((await access(sl, code=sl.authorize("TB2")))["access_token"])
    with pytest.raises(SlackApiError) as info:
        await client(sl, token).chat_postMessage(channel="CA1", text="hi")
    assert info.value.response["error"] == "channel_not_found"


async def test_a_rotating_token_expires_and_its_refresh_token_works_once(sl: FakeSlack) -> None:
    sl.token_rotation = True
    sl.token_lifetime_seconds = 0  # expired at once
    first = await access(sl, code=sl.authorize("TA1"))
    assert str(first["access_token"]).startswith("xoxe.xoxb-")
    assert str(first["refresh_token"]).startswith("xoxe-1-") and first["expires_in"] == 0
    with pytest.raises(SlackApiError) as info:
        await client(sl, str(first["access_token"])).auth_test()
    assert info.value.response["error"] == "token_expired"

    sl.token_lifetime_seconds = 43200
    refresh = str(first["refresh_token"])
    renewed = await access(sl, grant_type="refresh_token", refresh_token=refresh)
    assert renewed["token_type"] == "bot" and renewed["expires_in"] == 43200
    assert renewed["refresh_token"] != refresh
    assert (await client(sl, str(renewed["access_token"])).auth_test())["team_id"] == "TA1"
    again = await error_of(sl, grant_type="refresh_token", refresh_token=refresh)
    assert again == "invalid_refresh_token"  # revoked as it was used
