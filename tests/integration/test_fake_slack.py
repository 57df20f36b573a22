"""The fake Slack server speaks the Web API as slack-sdk and Bolt expect it."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.fakes import fixtures
from tests.fakes.slack_api import (
    FakeSlack,
    block_actions_body,
    block_actions_payload,
    signed_headers,
    slack_signature,
    slash_command_body,
)

TOKEN = "xoxb-1-test-token"
SECRET = "signing-secret"
BLOCKS = [
    {"type": "header", "text": {"type": "plain_text", "text": "New in rl"}},
    {"type": "section", "text": {"type": "mrkdwn", "text": "*ES for reasoning* — TL;DR"}},
]

fake_slack = fixtures.fake_slack


@pytest.fixture
async def sl() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(token=TOKEN) as server:
        yield server


@pytest.fixture
def client(sl: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=TOKEN, base_url=sl.base_url)


async def test_fixture_answers_auth_test(fake_slack: FakeSlack) -> None:
    client = AsyncWebClient(token=fake_slack.token, base_url=fake_slack.base_url)
    assert (await client.auth_test())["bot_id"] == "B0BOT"


async def test_auth_test_has_what_bolt_reads(client: AsyncWebClient) -> None:
    response = await client.auth_test()
    assert response.status_code == 200
    assert {k: response[k] for k in ("team_id", "user_id", "bot_id")} == {
        "team_id": "T1",
        "user_id": "U0BOT",
        "bot_id": "B0BOT",
    }
    assert response["url"].startswith("https://")


async def test_post_message_update_and_ephemeral(sl: FakeSlack, client: AsyncWebClient) -> None:
    first = await client.chat_postMessage(channel="C1", text="New in rl", blocks=BLOCKS)
    second = await client.chat_postMessage(channel="C2", text="thread reply", thread_ts=first["ts"])

    assert first["channel"] == "C1" and first["ts"] == "1700000000.000100"
    assert float(second["ts"]) > float(first["ts"])
    assert first["message"]["blocks"] == BLOCKS and first["message"]["bot_id"] == "B0BOT"
    assert sl.messages_to("C2")[0]["thread_ts"] == first["ts"]

    updated = await client.chat_update(channel="C1", ts=first["ts"], text="Sent to 3 channels")
    assert updated["message"]["text"] == "Sent to 3 channels"
    assert [m["text"] for m in sl.messages_to("C1")] == ["Sent to 3 channels"]

    # chat.postEphemeral: only to someone in the channel (user_not_in_channel otherwise).
    with pytest.raises(SlackApiError) as outside:
        await client.chat_postEphemeral(channel="C1", user="U7", text="Only you see this")
    assert outside.value.response["error"] == "user_not_in_channel"
    assert sl.ephemerals == []
    sl.join("C1", "U7")
    shown = await client.chat_postEphemeral(channel="C1", user="U7", text="Only you see this")
    assert shown["message_ts"]
    assert sl.ephemerals_to("U7") == [
        {
            "channel": "C1",
            "user": "U7",
            "text": "Only you see this",
            "blocks": None,
            "ts": shown["message_ts"],
        }
    ]
    call = sl.calls("chat.postMessage")[0]
    assert call.channel == "C1" and call.params["blocks"] == BLOCKS and sl.delivered == 2


async def test_form_encoded_blocks_are_parsed(sl: FakeSlack, client: AsyncWebClient) -> None:
    response = await client.api_call(
        "chat.postMessage",
        params={"channel": "C1", "text": "form", "blocks": json.dumps(BLOCKS)},
    )
    assert response["message"]["blocks"] == BLOCKS
    assert sl.messages_to("C1")[0]["blocks"] == BLOCKS


async def test_posting_to_a_user_goes_to_the_direct_message(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    opened = await client.conversations_open(users="U7")
    assert opened["channel"]["id"] == sl.im_channel("U7")
    assert (await client.conversations_open(users="U7"))["already_open"] is True
    posted = await client.chat_postMessage(channel="U7", text="digest")
    assert posted["channel"] == opened["channel"]["id"]
    info = await client.conversations_info(channel=posted["channel"])
    assert info["channel"]["is_im"] is True and info["channel"]["user"] == "U7"


async def test_conversations_info_reflects_the_workspace(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    sl.add_channel("C9", name="old-papers", is_archived=True)
    sl.add_channel("G6", name="lab", is_private=True)

    archived = (await client.conversations_info(channel="C9"))["channel"]
    assert (archived["name"], archived["is_archived"], archived["is_im"]) == (
        "old-papers",
        True,
        False,
    )
    private = (await client.conversations_info(channel="G6"))["channel"]
    assert private["is_private"] and private["is_member"] and private["is_group"]
    assert sl.calls("conversations.info")[0].params == {"channel": "C9"}  # sent as GET query

    with pytest.raises(SlackApiError) as archived_error:
        await client.chat_postMessage(channel="C9", text="x")
    assert archived_error.value.response["error"] == "is_archived"


@pytest.mark.parametrize(
    "conversation",
    [
        {"channel_id": "G5", "is_private": True, "is_member": False},  # private, bot not in it
        {"channel_id": "D5", "is_member": False},  # a DM between two people
        {"channel_id": "G7", "is_mpim": True, "is_member": False},  # a group DM
    ],
)
async def test_a_conversation_without_the_bot_is_not_found_as_slack_answers(
    sl: FakeSlack, client: AsyncWebClient, conversation: dict[str, Any]
) -> None:
    conversation = dict(conversation)
    channel_id = conversation.pop("channel_id")
    sl.add_channel(channel_id, **conversation)
    for call in (client.conversations_info, client.chat_postMessage):
        with pytest.raises(SlackApiError) as raised:
            await call(channel=channel_id, text="x")
        assert raised.value.response["error"] == "channel_not_found"


async def test_a_public_channel_takes_posts_without_the_bot_only_with_chat_write_public(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    sl.add_channel("C5", name="news", is_member=False)
    assert (await client.chat_postMessage(channel="C5", text="x"))["ok"]
    sl.scopes.discard("chat:write.public")
    with pytest.raises(SlackApiError) as outside:
        await client.chat_postMessage(channel="C5", text="x")
    assert outside.value.response["error"] == "not_in_channel"


async def test_a_missing_scope_names_the_scope_needed(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    sl.add_channel("G6", is_private=True)
    sl.scopes.discard("groups:read")
    sl.scopes.discard("chat:write")
    with pytest.raises(SlackApiError) as info:
        await client.conversations_info(channel="G6")
    assert (info.value.response["error"], info.value.response["needed"]) == (
        "missing_scope",
        "groups:read",
    )
    with pytest.raises(SlackApiError) as post:
        await client.chat_postMessage(channel="C1", text="x")
    assert post.value.response["needed"] == "chat:write"
    assert (await client.conversations_info(channel="C1"))["channel"]["is_channel"]


async def test_users_info_gives_locale_only_when_asked(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    sl.user_locales["U7"] = "ko-KR"
    sl.user_timezones["U7"] = "Asia/Seoul"

    with_locale = (await client.users_info(user="U7", include_locale=True))["user"]
    assert (with_locale["locale"], with_locale["tz"]) == ("ko-KR", "Asia/Seoul")
    assert "locale" not in (await client.users_info(user="U7"))["user"]
    assert (await client.users_info(user="U8", include_locale=True))["user"]["locale"] == "en-US"


@pytest.mark.parametrize(
    "error",
    [
        "channel_not_found",
        "is_archived",
        "not_in_channel",
        "account_inactive",
        "invalid_auth",
        "token_revoked",
        "fatal_error",
    ],
)
async def test_channel_errors_raise_slack_api_error(
    sl: FakeSlack, client: AsyncWebClient, error: str
) -> None:
    sl.channel_errors["C404"] = error
    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel="C404", text="digest")
    assert raised.value.response.status_code == 200
    assert raised.value.response["error"] == error
    assert (await client.chat_postMessage(channel="C1", text="digest"))["ok"]
    assert sl.messages_to("C404") == []


async def test_token_errors(sl: FakeSlack, client: AsyncWebClient) -> None:
    stranger = AsyncWebClient(token="xoxb-someone-else", base_url=sl.base_url)
    with pytest.raises(SlackApiError) as raised:
        await stranger.auth_test()
    assert raised.value.response.data == {"ok": False, "error": "invalid_auth"}
    sl.token_errors[TOKEN] = "token_revoked"
    with pytest.raises(SlackApiError) as revoked:
        await client.conversations_info(channel="C1")
    assert revoked.value.response["error"] == "token_revoked"


async def test_user_errors(sl: FakeSlack, client: AsyncWebClient) -> None:
    sl.user_errors["U404"] = "user_not_found"
    for call in (client.users_info(user="U404"), client.conversations_open(users="U404")):
        with pytest.raises(SlackApiError) as raised:
            await call
        assert raised.value.response["error"] == "user_not_found"


async def test_ratelimited_carries_retry_after(sl: FakeSlack, client: AsyncWebClient) -> None:
    sl.fail_next("chat.postMessage", retry_after=7, channel="C1")
    assert (await client.chat_postMessage(channel="C2", text="other channel"))["ok"]
    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel="C1", text="x")
    response = raised.value.response
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response["error"] == "ratelimited"
    assert (await client.chat_postMessage(channel="C1", text="x"))["ok"]


async def test_fail_next_other_statuses_and_times(sl: FakeSlack, client: AsyncWebClient) -> None:
    sl.fail_next("chat.postMessage", status=200, error="internal_error", times=2)
    for _ in range(2):
        with pytest.raises(SlackApiError) as raised:
            await client.chat_postMessage(channel="C1", text="x")
        assert raised.value.response["error"] == "internal_error"
    sl.fail_next("*", status=503)
    with pytest.raises(SlackApiError) as raised:
        await client.auth_test()
    assert raised.value.response.status_code == 503
    assert [c.error for c in sl.sent] == ["internal_error", "internal_error", "fatal_error"]


async def test_block_kit_limits_answer_invalid_blocks(client: AsyncWebClient) -> None:
    too_long = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]
    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel="C1", text="x", blocks=too_long)
    assert raised.value.response["error"] == "invalid_blocks"
    assert raised.value.response["errors"] == [
        "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"
    ]
    with pytest.raises(SlackApiError) as empty:
        await client.api_call("chat.postMessage", json={"channel": "C1"})
    assert empty.value.response["error"] == "no_text"


async def test_dropped_connection_is_retried_by_slack_sdk(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    sl.drop_next("chat.postMessage")
    retry_at_once = AsyncConnectionErrorRetryHandler(
        interval_calculator=FixedValueRetryIntervalCalculator(0.0)
    )
    client.retry_handlers = [retry_at_once]
    assert (await client.chat_postMessage(channel="C1", text="x"))["ok"]
    assert [c.status for c in sl.calls("chat.postMessage")] == [0, 200]
    assert len(sl.messages_to("C1")) == 1


async def test_per_channel_limit(sl: FakeSlack, client: AsyncWebClient) -> None:
    sl.enforce_limits = True
    await client.chat_postMessage(channel="C1", text="a")
    await client.chat_postMessage(channel="C2", text="b")
    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel="C1", text="c")
    assert raised.value.response.status_code == 429
    assert raised.value.response.headers["Retry-After"] == "1"
    assert [(v.channel, v.retry_after) for v in sl.limit_violations] == [("C1", 1)]


async def test_response_url_records_posts(sl: FakeSlack) -> None:
    url = sl.response_url("r1")
    webhook = AsyncWebhookClient(url)
    response = await webhook.send(text="Subscribed: rl", response_type="ephemeral")
    assert (response.status_code, response.body) == (200, "ok")
    assert sl.responses["r1"] == [{"text": "Subscribed: rl", "response_type": "ephemeral"}]

    sl.fail_next("response_url", status=404, error="expired_url", channel="r1")
    assert (await webhook.send(text="late")).status_code == 404
    assert await sl.wait_for_response("r1", timeout=0.1) == sl.responses["r1"]


async def test_wait_for_counts_and_times_out(sl: FakeSlack, client: AsyncWebClient) -> None:
    await client.chat_postMessage(channel="C1", text="a")
    (call,) = await sl.wait_for(1, timeout=0.5)
    assert call.params["text"] == "a"
    with pytest.raises(TimeoutError, match="1 of 2 expected calls"):
        await sl.wait_for(2, timeout=0.1)


def test_signature_matches_slack_sdk_verifier() -> None:
    body = slash_command_body(response_url="http://127.0.0.1/response/r1")
    now = int(time.time())
    assert SignatureVerifier(SECRET).is_valid(body, now, slack_signature(SECRET, now, body))
    headers = signed_headers(SECRET, body, timestamp=now)
    assert SignatureVerifier(SECRET).is_valid_request(body, headers)
    fields = parse_qs(body.decode())
    assert fields["command"] == ["/trend"] and fields["text"] == ["subscribe rl"]


async def test_bolt_app_round_trip(sl: FakeSlack) -> None:
    app = AsyncApp(
        client=AsyncWebClient(token=TOKEN, base_url=sl.base_url),
        signing_secret=SECRET,
        process_before_response=True,
    )
    seen: list[dict[str, Any]] = []

    @app.command("/trend")
    async def trend(ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        await ack(text="Working on it")
        await respond(text=f"Subscribed: {command['text'].split()[1]}", response_type="ephemeral")

    @app.action("broadcast_send")
    async def send(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        seen.append(body)
        await respond(text="Sent", replace_original=True)

    body = slash_command_body(response_url=sl.response_url("cmd"), user_id="U7", channel_id="C1")
    answer = await app.async_dispatch(
        AsyncBoltRequest(body=body.decode(), headers=signed_headers(SECRET, body))
    )
    assert (answer.status, answer.body) == (200, "Working on it")
    assert sl.responses["cmd"] == [{"text": "Subscribed: rl", "response_type": "ephemeral"}]
    assert sl.request_count["auth.test"] == 1

    payload = block_actions_payload(
        "broadcast_send", value="42", user_id="U7", response_url=sl.response_url("btn")
    )
    press = block_actions_body(payload)
    answer = await app.async_dispatch(
        AsyncBoltRequest(body=press.decode(), headers=signed_headers(SECRET, press))
    )
    assert answer.status == 200
    assert seen[0]["actions"][0]["value"] == "42" and seen[0]["container"]["is_ephemeral"]
    assert sl.responses["btn"] == [{"text": "Sent", "replace_original": True}]

    stale = signed_headers(SECRET, body, timestamp=int(time.time()) - 301)
    refused = await app.async_dispatch(AsyncBoltRequest(body=body.decode(), headers=stale))
    assert refused.status == 401


async def test_every_answer_to_an_accepted_token_lists_its_scopes(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    sl.scopes = {"chat:write", "commands"}
    response = await client.auth_test()
    assert response.headers["x-oauth-scopes"] == "chat:write,commands"
    sl.token_errors[TOKEN] = "token_revoked"
    with pytest.raises(SlackApiError) as refused:
        await client.auth_test()
    assert refused.value.response["error"] == "token_revoked"
    assert "x-oauth-scopes" not in {k.lower() for k in refused.value.response.headers}


async def test_the_workspace_rate_refuses_posts_over_it_across_channels(
    sl: FakeSlack, client: AsyncWebClient
) -> None:
    sl.workspace_rate = 3
    for channel in ("C1", "C2", "C3"):
        await client.chat_postMessage(channel=channel, text="x")
    with pytest.raises(SlackApiError) as limited:
        await client.chat_postMessage(channel="C4", text="x")
    assert limited.value.response.status_code == 429
    assert limited.value.response.headers["retry-after"] == "1"
    assert [v.channel for v in sl.limit_violations] == ["C4"]
