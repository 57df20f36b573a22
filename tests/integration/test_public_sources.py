"""Revision 0005_public_sources, from a database of the build before it.

``tests/data/upgrade/1d764a6-credentials.*.sql`` was made by that build
(``make_credentials_dump.sh``): a private feed with relative links and ids, polled with one
token and then another (two ``sources`` rows, as that build made them), digests left queued.
Its rows hold the password and both tokens. Loaded with the feed's port moved to a live
fake, upgraded by ``trendbot db upgrade``: no credential is left in any text column (nor in
the SQLite file), the two rows are one source that keeps its baseline, pages and ledger, a
poll finds nothing new, and the queued digests go out with public links.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from bot.store.engine import head_revision
from tests.cli import run_cli_async
from tests.conftest import NO_POSTGRES
from tests.data.upgrade.seed_credentials import (
    FEED_PORT,
    NEW_TOKEN,
    OLD_TOKEN,
    PASSWORD,
    USER,
    feed,
)
from tests.fakes.feed_server import FeedServer, Served
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_source_credentials import _everything_stored
from tests.run_env import telegram_env
from tests.scratch import create_database, drop_database

DUMPS = Path(__file__).resolve().parents[1] / "data" / "upgrade"
BUILD = "1d764a6-credentials"
SECRETS = (PASSWORD, OLD_TOKEN, NEW_TOKEN, f"{USER}:")


async def load(backend: str, directory: Path, *, host: str) -> AsyncIterator[str]:
    """The dump of the build before 0005, its feed moved from FEED_PORT to ``host``."""
    dump = (DUMPS / f"{BUILD}.{backend}.sql").read_text(encoding="utf-8")
    dump = dump.replace(f"127.0.0.1:{FEED_PORT}", host)
    if backend == "sqlite":
        path = directory / "old.db"
        with sqlite3.connect(path) as conn:
            conn.executescript(dump)
        conn.close()
        yield f"sqlite+aiosqlite:///{path}"
        return
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        pytest.skip(NO_POSTGRES)
    url = await create_database(base, prefix="trendbot_upgrade")
    try:
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(dump)
        finally:
            await conn.close()
        yield url
    finally:
        await drop_database(url, base_url=base)


async def execute(url: str, *statements: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            for statement in statements:
                await conn.execute(text(statement))
    finally:
        await engine.dispose()


async def rows(url: str, query: str) -> list[tuple[object, ...]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return [tuple(row) for row in await conn.execute(text(query))]
    finally:
        await engine.dispose()


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_an_upgrade_stores_sources_by_their_public_identity_and_keeps_their_history(
    backend: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    async with (
        FeedServer() as feeds,
        FakeTelegram(token="123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345678") as tg,
    ):
        host = feeds.base_url.removeprefix("http://")
        feeds.serve(
            "/wiki/feed.atom",
            Served(
                feed(4),
                "application/atom+xml",
                basic=(USER, PASSWORD),
                query=(("token", NEW_TOKEN),),
            ),
        )
        public = f"http://{host}/wiki/feed.atom"
        async for url in load(backend, tmp_path, host=host):
            # History on the newer row's copy of a page (3 and 6 are one page, under the
            # old and the new token): its ledger row, a vote and its queued message.
            await execute(
                url,
                "UPDATE chat_pages SET page_id = 6 WHERE page_id = 3",
                "UPDATE outbox SET payload = REPLACE(payload, '[[3,', '[[6,')",
                "INSERT INTO votes (chat_pk, page_id, user_id, value, voted_at) "
                "VALUES (1, 6, '1001', 1, '2026-12-07 00:00:00')",
            )
            before = await rows(url, "SELECT count(*) FROM chat_pages")
            old_pages = await rows(url, "SELECT key FROM pages")
            assert any(PASSWORD in str(key) for (key,) in old_pages)
            env = dict(
                clean_env,
                DATABASE_URL=url,
                WIKI_SOURCES=f"http://{USER}:{PASSWORD}@{host}/wiki/feed.atom?token={NEW_TOKEN}",
                **telegram_env(tg),
                LOG_LEVEL="DEBUG",
            )
            outputs = []
            for args in (("db", "upgrade"), ("poll",), ("digest", "--now")):
                done = await run_cli_async(*args, env=env, cwd=tmp_path)
                assert done.returncode == 0, done.stderr[-3000:]
                outputs += [done.stdout, done.stderr]
            assert outputs[0].splitlines()[-1] == f"from 0004_tag_followers to {head_revision()}"
            # History kept: one source, the oldest row, with its baseline: nothing new.
            assert outputs[2].splitlines()[-1] == "0 new, 0 updated, 0 skipped"
            (source,) = await rows(url, "SELECT id, name, baseline_at FROM sources")
            assert source[:2] == (1, public) and source[2] is not None
            keys = sorted(str(key) for (key,) in await rows(url, "SELECT key FROM pages"))
            assert keys == [f"http://{host}/wiki/papers/{n}" for n in range(1, 5)]
            papers = {str(p) for (p,) in await rows(url, "SELECT paper FROM pages")}
            assert papers == {f"path:{key}" for key in keys}
            ledger = await rows(
                url,
                "SELECT p.key FROM chat_pages c JOIN pages p ON p.id = c.page_id ORDER BY p.key",
            )
            assert [str(k) for (k,) in ledger] == [
                f"http://{host}/wiki/papers/3",
                f"http://{host}/wiki/papers/4",
            ]
            assert await rows(url, "SELECT count(*) FROM chat_pages") == before
            assert await rows(url, "SELECT page_id, user_id FROM votes") == [(3, "1001")]
            payloads = [str(p) for (p,) in await rows(url, "SELECT payload FROM outbox")]
            assert any('"pages":[[3,' in p for p in payloads), payloads
            # The digests the earlier build left queued go out, with public links.
            sent = [json.dumps(m, ensure_ascii=False) for m in tg.messages_to(1001)]
            assert any(f"http://{host}/wiki/papers/3.html" in t for t in sent), sent
            assert any(f"http://{host}/wiki/papers/4.html" in t for t in sent), sent
            everything = "\n".join([*outputs, *sent, *await _everything_stored(url)])
            for secret in SECRETS:
                assert secret not in everything, secret
            if backend == "sqlite":
                data = await asyncio.to_thread(Path(url.split("///", 1)[1]).read_bytes)
                for secret in SECRETS:
                    assert secret.encode() not in data, secret
                # The copy db upgrade kept of the file as it was holds what it held: the
                # owner's alone to read (docs/security.md says to delete it once verified).
                (kept,) = [p for p in os.listdir(tmp_path) if p.startswith("old.db.before-")]
                assert stat.S_IMODE(os.stat(tmp_path / kept).st_mode) == 0o600
