"""The installation and state stores of Slack's OAuth install, on each database."""

from __future__ import annotations

import asyncio

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.slack_oauth import StateStore
from bot.store import installations as store
from bot.store.installations import InstallationRecord, TokenCipher, TokenKeyError
from bot.store.schema import slack_installations, slack_oauth_states

SECRET = "state-secret-0123456789abcdef"


async def test_a_state_is_consumed_once_even_by_two_requests_at_once(engine: AsyncEngine) -> None:
    states = StateStore(engine=engine, secret=SECRET)
    state = await states.async_issue()
    results = await asyncio.gather(states.async_consume(state), states.async_consume(state))
    assert sorted(results) == [False, True]
    assert await states.async_consume(state) is False


async def test_the_database_holds_no_usable_state(engine: AsyncEngine) -> None:
    states = StateStore(engine=engine, secret=SECRET)
    state = await states.async_issue()
    async with engine.connect() as conn:
        stored = [row[0] for row in await conn.execute(select(slack_oauth_states.c.state_hash))]
    assert stored == [store.state_hash(SECRET, state)] and state not in stored[0]
    other = StateStore(engine=engine, secret="another-secret-0123456789")
    assert await other.async_consume(state) is False  # a state is only good under its key
    assert await states.async_consume(state) is True


@pytest.mark.parametrize("state", ["", "x" * 257, "\x00", "é" * 10])
async def test_an_unknown_or_odd_state_is_refused(engine: AsyncEngine, state: str) -> None:
    assert await StateStore(engine=engine, secret=SECRET).async_consume(state) is False


async def test_an_expired_state_is_refused_and_forgotten(engine: AsyncEngine) -> None:
    states = StateStore(engine=engine, secret=SECRET, expiration_seconds=0)
    state = await states.async_issue()
    assert await states.async_consume(state) is False
    await states.async_issue()  # issuing clears what expired
    async with engine.connect() as conn:
        rows = (await conn.execute(select(slack_oauth_states))).all()
    assert len(rows) <= 1


async def test_an_installation_round_trips_encrypted(engine: AsyncEngine) -> None:
    cipher = TokenCipher(Fernet.generate_key().decode())
    record = InstallationRecord(
        enterprise_id=None,
        team_id="T1",
        is_enterprise_install=False,
        bot_token="xoxb-1-secret",
        bot_refresh_token="xoxe-1-refresh",
        installer_user_id="U1",
    )
    async with engine.begin() as conn:
        await store.save(conn, record, cipher=cipher)
        found = await store.find(conn, enterprise_id=None, team_id="T1", cipher=cipher)
        raw = (await conn.execute(select(slack_installations))).mappings().one()
        # A refresh keeps who installed the app.
        await store.save(
            conn, InstallationRecord(None, "T1", False, "xoxb-2-secret"), cipher=cipher
        )
        again = await store.find(conn, enterprise_id=None, team_id="T1", cipher=cipher)
        assert await store.installer_of(conn, team_id="T1") == "U1"
        assert await store.delete_installation(conn, enterprise_id=None, team_id="T1") == 1
        assert await store.find(conn, enterprise_id=None, team_id="T1", cipher=cipher) is None
    assert found is not None and found.bot_token == "xoxb-1-secret"
    assert found.bot_refresh_token == "xoxe-1-refresh"
    assert "secret" not in raw["bot_token"] and "refresh" not in raw["bot_refresh_token"]
    assert again is not None and again.bot_token == "xoxb-2-secret"


async def test_an_org_wide_install_serves_the_organisations_workspaces(
    engine: AsyncEngine,
) -> None:
    cipher = TokenCipher(Fernet.generate_key().decode())
    org = InstallationRecord("E1", None, True, "xoxb-org")
    async with engine.begin() as conn:
        await store.save(conn, org, cipher=cipher)
        found = await store.find(conn, enterprise_id="E1", team_id="T7", cipher=cipher)
        elsewhere = await store.find(conn, enterprise_id=None, team_id="T7", cipher=cipher)
    assert found is not None and found.bot_token == "xoxb-org" and found.is_enterprise_install
    assert elsewhere is None


def test_a_new_key_reads_what_the_old_one_wrote_while_both_are_listed() -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    written = TokenCipher(old).encrypt("xoxb-1")
    assert TokenCipher(f"{new},{old}").decrypt(written) == "xoxb-1"
    with pytest.raises(TokenKeyError):
        TokenCipher(new).decrypt(written)
    with pytest.raises(TokenKeyError):
        TokenCipher(new).decrypt("not a token at all")
