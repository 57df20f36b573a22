"""The installation and state stores of Slack's OAuth install, on each database."""

from __future__ import annotations

import asyncio

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.slack.install import StateStore
from bot.store import installations as store
from bot.store.engine import create_engine
from bot.store.installations import InstallationRecord, TokenCipher, TokenKeyError
from bot.store.schema import slack_installations, slack_oauth_states
from tests.waiting import wait_until

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
    other = StateStore(engine=engine, secret="another-secret-0123456789")
    assert await other.async_consume(state) is False  # a state is only good under its key
    assert await states.async_consume(state) is True
    async with engine.connect() as conn:
        stored = [row[0] for row in await conn.execute(select(slack_oauth_states.c.state_hash))]
    assert stored == [store.state_hash(SECRET, state)] and state not in stored[0]


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


# ---------------------------------------------------------------------- key rotation

OLD_KEY, NEW_KEY = Fernet.generate_key().decode(), Fernet.generate_key().decode()


async def _installed(engine: AsyncEngine, count: int, *, key: str) -> dict[str, tuple[str, str]]:
    """``count`` workspaces' tokens stored under ``key``: team -> (token, refresh token)."""
    cipher, tokens = TokenCipher(key), {}
    async with engine.begin() as conn:
        for n in range(count):
            team = f"T{n:05d}"
            tokens[team] = (f"xoxb-{n}-secret", f"xoxe-{n}-refresh")
            await store.save(
                conn,
                InstallationRecord(
                    None, team, False, tokens[team][0], bot_refresh_token=tokens[team][1]
                ),
                cipher=cipher,
            )
    return tokens


async def _opened_with(engine: AsyncEngine, key: str) -> dict[str, tuple[str, str]]:
    cipher = TokenCipher(key)
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(
                slack_installations.c.team_id,
                slack_installations.c.bot_token,
                slack_installations.c.bot_refresh_token,
            )
        )
        return {
            team: (cipher.decrypt(token), cipher.decrypt(refresh)) for team, token, refresh in rows
        }


async def test_two_replicas_rotating_at_once_move_each_token_once(
    engine: AsyncEngine, database_url: str
) -> None:
    """Both read the same rows; each row is written by one of them (compare and set), and
    every token then opens with the new key alone."""
    tokens = await _installed(engine, store.ROTATION_BATCH * 2 + 50, key=OLD_KEY)
    other = create_engine(database_url)
    cipher = TokenCipher(f"{NEW_KEY},{OLD_KEY}")
    try:
        first, second = await asyncio.gather(
            store.rotate_keys(engine, cipher=cipher), store.rotate_keys(other, cipher=cipher)
        )
    finally:
        await other.dispose()
    assert first.rotated + second.rotated == len(tokens)
    assert first.unreadable == second.unreadable == ()
    assert await _opened_with(engine, NEW_KEY) == tokens
    again = await store.rotate_keys(engine, cipher=cipher)  # nothing left to do
    assert again.rotated == 0


async def test_a_token_refreshed_while_it_is_rotated_keeps_the_refresh(
    engine: AsyncEngine, database_url: str
) -> None:
    """Another replica refreshes a token (its row locked, as ``Workspaces`` does) while this
    one re-encrypts: the refreshed token stays, it is not put back to the one read before."""
    await _installed(engine, 1, key=OLD_KEY)
    cipher = TokenCipher(f"{NEW_KEY},{OLD_KEY}")
    refresher = create_engine(database_url)
    try:
        async with refresher.begin() as conn:
            await store.lock(conn, enterprise_id=None, team_id="T00000")
            rotation = asyncio.create_task(store.rotate_keys(engine, cipher=cipher))
            if engine.dialect.name == "postgresql":
                # The rotation has read the row and waits on its lock to write it.

                async def blocked() -> bool:
                    assert not rotation.done(), await rotation
                    return await _waiting_on_a_lock(refresher)

                await wait_until(blocked, interval=0.01, what="the rotation waiting on the lock")
            else:
                await asyncio.sleep(0.2)  # SQLite: the rotation waits for the write lock
            await store.save(
                conn,
                InstallationRecord(None, "T00000", False, "xoxb-new", bot_refresh_token="xoxe-new"),
                cipher=cipher,
            )
        done = await rotation
    finally:
        await refresher.dispose()
    assert await _opened_with(engine, NEW_KEY) == {"T00000": ("xoxb-new", "xoxe-new")}
    assert done.rotated == 0


async def _waiting_on_a_lock(engine: AsyncEngine) -> bool:
    async with engine.connect() as conn:
        waiting = await conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
        )
        return bool(waiting.scalar_one())


async def test_a_token_no_key_opens_is_named_and_left_as_it_is(engine: AsyncEngine) -> None:
    tokens = await _installed(engine, 2, key=OLD_KEY)
    lost = TokenCipher(Fernet.generate_key().decode())
    async with engine.begin() as conn:
        await store.save(conn, InstallationRecord(None, "TLOST", False, "xoxb-lost"), cipher=lost)
        before = (
            await conn.execute(
                select(slack_installations.c.bot_token).where(
                    slack_installations.c.team_id == "TLOST"
                )
            )
        ).scalar_one()
    done = await store.rotate_keys(engine, cipher=TokenCipher(f"{NEW_KEY},{OLD_KEY}"))
    async with engine.connect() as conn:
        after = (
            await conn.execute(
                select(slack_installations.c.bot_token).where(
                    slack_installations.c.team_id == "TLOST"
                )
            )
        ).scalar_one()
    assert done.rotated == len(tokens)
    assert done.unreadable == (store.Unreadable(enterprise_id=None, team_id="TLOST"),)
    assert after == before
