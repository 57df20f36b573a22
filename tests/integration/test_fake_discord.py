"""The fake Discord server answers as Discord's REST API v10 does: its OpenAPI schema, its
limits, its rate-limit headers and 429s, its error codes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.fakes.discord_api import (
    DEFAULT_TOKEN,
    IS_COMPONENTS_V2,
    FakeDiscord,
    sign_request,
)

CHANNEL = "1300000000000000001"
ROUTE = "POST /channels/{channel_id}/messages"


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(route_limit=5, route_window=5.0) as server:
        server.add_channel(CHANNEL)
        yield server


@pytest.fixture
async def client(dc: FakeDiscord) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        base_url=dc.base_url, headers={"Authorization": f"Bot {DEFAULT_TOKEN}"}
    ) as http:
        yield http


async def post(client: httpx.AsyncClient, body: Any, channel: str = CHANNEL) -> httpx.Response:
    return await client.post(f"/channels/{channel}/messages", json=body)


async def test_a_message_is_created_with_the_bucket_headers(
    client: httpx.AsyncClient, dc: FakeDiscord
) -> None:
    answer = await post(client, {"content": "hello", "allowed_mentions": {"parse": []}})
    assert answer.status_code == 200
    assert answer.json()["content"] == "hello"
    for name in ("Limit", "Remaining", "Reset", "Reset-After", "Bucket"):
        assert f"X-RateLimit-{name}" in answer.headers
    assert answer.headers["X-RateLimit-Remaining"] == "4"
    assert dc.messages_to(CHANNEL)[0]["content"] == "hello"


async def test_a_body_against_the_schema_is_50035_with_the_field(
    client: httpx.AsyncClient,
) -> None:
    answer = await post(client, {"content": "x", "tts": "yes"})
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == 50035 and body["message"] == "Invalid Form Body"
    assert body["errors"]["tts"]["_errors"][0]["code"] == "BASE_TYPE_BAD_TYPE"


async def test_content_over_2000_characters_is_refused(client: httpx.AsyncClient) -> None:
    answer = await post(client, {"content": "x" * 2001})
    assert answer.status_code == 400 and answer.json()["code"] == 50035
    assert (await post(client, {"content": "x" * 2000})).status_code == 200


async def test_an_empty_message_is_50006(client: httpx.AsyncClient) -> None:
    answer = await post(client, {"content": ""})
    assert answer.json()["code"] == 50006


def _text(n: int) -> dict[str, Any]:
    return {"type": 10, "content": "t" * n}


async def test_components_v2_limits(client: httpx.AsyncClient) -> None:
    ok = {"flags": IS_COMPONENTS_V2, "components": [{"type": 17, "components": [_text(10)]}]}
    assert (await post(client, ok)).status_code == 200
    # Content with V2.
    bad = {**ok, "content": "x"}
    assert (await post(client, bad)).json()["code"] == 50035
    # 41 components in all (a container and 40 texts).
    many = {
        "flags": IS_COMPONENTS_V2,
        "components": [
            {"type": 17, "components": [_text(1) for _ in range(20)]},
            {"type": 17, "components": [_text(1) for _ in range(19)]},
        ],
    }
    assert (await post(client, many)).json()["code"] == 50035
    # 4,001 characters of text.
    long = {"flags": IS_COMPONENTS_V2, "components": [_text(2000), _text(2001)]}
    assert (await post(client, long)).json()["code"] == 50035
    # A V2 component without the flag.
    assert (await post(client, {"components": [_text(5)]})).json()["code"] == 50035


async def test_an_unknown_channel_and_refusals(client: httpx.AsyncClient, dc: FakeDiscord) -> None:
    answer = await post(client, {"content": "x"}, channel="999")
    assert answer.status_code == 404 and answer.json()["code"] == 10003
    for code in (50001, 50013, 50007):
        channel = dc.add_channel(f"13000000000000{code}")
        dc.channel_errors[channel] = code
        answer = await post(client, {"content": "x"}, channel=channel)
        assert answer.status_code == 403 and answer.json()["code"] == code
    assert dc.invalid_in_window() == 3


async def test_a_wrong_token_is_401_and_counted(dc: FakeDiscord) -> None:
    async with httpx.AsyncClient(base_url=dc.base_url) as anonymous:
        answer = await anonymous.post(f"/channels/{CHANNEL}/messages", json={"content": "x"})
    assert answer.status_code == 401
    assert dc.invalid_in_window() == 1


async def test_the_route_bucket_answers_429_with_retry_after(
    client: httpx.AsyncClient, dc: FakeDiscord
) -> None:
    for _ in range(5):
        assert (await post(client, {"content": "x"})).status_code == 200
    answer = await post(client, {"content": "x"})
    assert answer.status_code == 429
    body = answer.json()
    assert body["global"] is False and 0 < body["retry_after"] <= 5.0
    assert answer.headers["X-RateLimit-Scope"] == "user"
    assert answer.headers["X-RateLimit-Remaining"] == "0"
    assert "Retry-After" in answer.headers
    assert len(dc.limit_violations) == 1


async def test_the_global_limit_answers_429_global(dc: FakeDiscord) -> None:
    dc.global_rate = 3
    channels = [dc.add_channel(f"14{i:017d}") for i in range(4)]
    async with httpx.AsyncClient(
        base_url=dc.base_url, headers={"Authorization": f"Bot {DEFAULT_TOKEN}"}
    ) as client:
        answers = [await post(client, {"content": "x"}, channel=c) for c in channels]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert answers[-1].json()["global"] is True
    assert answers[-1].headers["X-RateLimit-Global"] == "true"
    assert answers[-1].headers["X-RateLimit-Scope"] == "global"


async def test_enforce_nonce_returns_the_earlier_message(
    client: httpx.AsyncClient, dc: FakeDiscord
) -> None:
    body = {"content": "once", "nonce": "abc123", "enforce_nonce": True}
    first = (await post(client, body)).json()
    second = (await post(client, body)).json()
    assert first["id"] == second["id"]
    assert len(dc.messages_to(CHANNEL)) == 1


async def test_an_interaction_is_answered_once_within_3_seconds(dc: FakeDiscord) -> None:
    created = dc.new_interaction()
    url = f"/interactions/{created.id}/{created.token}/callback"
    async with httpx.AsyncClient(base_url=dc.base_url) as client:
        first = await client.post(url, json={"type": 4, "data": {"content": "hi", "flags": 64}})
        again = await client.post(url, json={"type": 4, "data": {"content": "hi"}})
        late = dc.new_interaction()
        late.created -= 3.5
        too_late = await client.post(
            f"/interactions/{late.id}/{late.token}/callback", json={"type": 5}
        )
        follow = await client.post(
            f"/webhooks/{dc.application_id}/{created.token}", json={"content": "more"}
        )
    assert first.status_code == 204
    assert again.json()["code"] == 40060
    assert too_late.json()["code"] == 10062
    assert follow.status_code == 200


async def test_ephemeral_outside_an_interaction_is_refused(client: httpx.AsyncClient) -> None:
    answer = await post(client, {"content": "x", "flags": 64})
    assert answer.json()["code"] == 50035


async def test_commands_are_validated_and_kept(client: httpx.AsyncClient, dc: FakeDiscord) -> None:
    url = f"/applications/{dc.application_id}/commands"
    bad = await client.put(url, json=[{"name": "x" * 40, "description": "d"}])
    assert bad.json()["code"] == 50035
    good = await client.put(url, json=[{"name": "help", "description": "Help", "type": 1}])
    assert good.status_code == 200 and dc.commands[0]["name"] == "help"
    assert (await client.get(url)).json()[0]["name"] == "help"


async def test_a_server_error_and_a_dropped_connection(
    client: httpx.AsyncClient, dc: FakeDiscord
) -> None:
    dc.fail_next(ROUTE, status=502)
    assert (await post(client, {"content": "x"})).status_code == 502
    dc.drop_next(ROUTE)
    with pytest.raises(httpx.HTTPError):
        await post(client, {"content": "x"})


def test_signed_headers_verify_with_the_public_key() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from tests.fakes.discord_api import TEST_PUBLIC_KEY

    headers = sign_request(b"{}", timestamp=1)
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(TEST_PUBLIC_KEY))
    key.verify(bytes.fromhex(headers["X-Signature-Ed25519"]), b"1{}")


async def test_concurrent_sends_never_pass_the_bucket(dc: FakeDiscord) -> None:
    async with httpx.AsyncClient(
        base_url=dc.base_url, headers={"Authorization": f"Bot {DEFAULT_TOKEN}"}
    ) as client:
        answers = await asyncio.gather(*(post(client, {"content": "x"}) for _ in range(8)))
    assert sorted(a.status_code for a in answers) == [200] * 5 + [429] * 3
