"""Upgrading the databases of earlier builds, and refusing what cannot be run.

The dumps in ``tests/data/upgrade/`` were made by earlier builds with their own code
(``make_dumps.sh``). Each is loaded into a fresh SQLite file or PostgreSQL database and
upgraded by ``trendbot db upgrade`` (a database from before the first release is refused
until ``scripts/adopt_prerelease.py`` has brought it to the baseline); then ``subscribers``,
``digest --now`` against the fake Telegram and a ``run`` with a delivery work on it, and no
row of any table was lost.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from subprocess import CompletedProcess

import asyncpg
import httpx
import pytest
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.commands.operator import Admin
from bot.ops import web
from bot.render import toggle
from bot.store import admin as admin_store
from bot.store import feedback as feedback_store
from bot.store import trends
from bot.store.admin import Audience
from bot.store.engine import PRERELEASE_REFUSAL, create_engine, head_revision, stamped_revision
from bot.store.schema import audit_log
from bot.store.schema import chats as chats_table
from scripts.adopt_prerelease import BASELINE, PRERELEASE
from tests.cli import run_cli_async, start_cli
from tests.conftest import NO_POSTGRES, Settings
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_migrations import schema_differences
from tests.run_env import telegram_env
from tests.scratch import create_database, drop_database
from tests.waiting import still_running, wait_until

DUMPS = Path(__file__).resolve().parents[1] / "data" / "upgrade"
# 1a7c8e9: about 200 commits before the baseline (no votes, no inactive_code, no feeds...);
# f76b35d: before inactive_code; 831c0a4: before the new ix_outbox_ready.
BUILDS = ("1a7c8e9", "f76b35d", "831c0a4")
SAMPLE_WIKI = Path(__file__).resolve().parents[2] / "bot" / "sample_wiki"
OPERATING = Path(__file__).resolve().parents[2] / "docs" / "operating.md"
ADOPT = Path(__file__).resolve().parents[2] / "scripts" / "adopt_prerelease.py"
TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
# What opening an older database says first: the copy kept (SQLite), or to use pg_dump.
NOTICES = ("backup of the database before the upgrade: ", "migrating the PostgreSQL database")
CHATS = {"telegram:1001", "telegram:1002", "telegram:1003", "telegram:1004", "telegram:1005"}


async def load_dump(build: str, backend: str, directory: Path) -> AsyncIterator[str]:
    """The URL of a fresh database holding the dump of ``build`` on ``backend``."""
    dump = (DUMPS / f"{build}.{backend}.sql").read_text(encoding="utf-8")
    if backend == "sqlite":
        path = directory / f"{build}.db"
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


async def run_adopt(url: str, *, env: dict[str, str], cwd: Path) -> CompletedProcess[str]:
    """``python scripts/adopt_prerelease.py URL`` to its end, as an operator runs it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ADOPT),
        url,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return CompletedProcess([str(ADOPT), url], process.returncode, out.decode(), err.decode())


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=BUILDS)
async def old_database(
    request: pytest.FixtureRequest, backend: str, tmp_path: Path
) -> AsyncIterator[str]:
    async for url in load_dump(request.param, backend, tmp_path):
        yield url


async def row_counts(url: str) -> dict[str, int]:
    """Every table's rows, by table (``alembic_version`` aside)."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda sync: sync.dialect.get_table_names(sync))
            return {
                table: (await conn.execute(text(f'SELECT count(*) FROM "{table}"'))).scalar_one()
                for table in sorted(tables)
                if table != "alembic_version"
            }
    finally:
        await engine.dispose()


def env_for(clean_env: dict[str, str], url: str, tg: FakeTelegram | None = None) -> dict[str, str]:
    env = dict(
        clean_env,
        DATABASE_URL=url,
        WIKI_SOURCES=str(SAMPLE_WIKI),
        HTTP_PORT="0",
        POLL_INTERVAL_SECONDS="3600",
        TELEGRAM_RATE_PER_SECOND="100",
        TELEGRAM_PAID_BROADCAST="true",
    )
    if tg is not None:
        env.update(telegram_env(tg))
    return env


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_an_earlier_builds_database_upgrades_and_keeps_every_row(
    old_database: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    before = await row_counts(old_database)
    assert before["chats"] == 5 and before["outbox"] > 0 and before["pages"] > 0
    env = env_for(clean_env, old_database)

    adopted = await run_adopt(old_database, env=env, cwd=tmp_path)
    assert adopted.returncode == 0, adopted.stderr
    told = adopted.stdout.splitlines()
    assert told[-2].startswith(f"adopted as {BASELINE}: ")
    assert told[-1] == "now run: trendbot db upgrade"
    if old_database.startswith("sqlite"):  # the file as it was, kept beside it
        assert told[0].startswith("backup of the database before the upgrade: ")
        kept = Path(told[0].rsplit(": ", 1)[1])
        with sqlite3.connect(kept) as conn:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
                (PRERELEASE,)
            ]
        conn.close()
    else:
        assert told[0].startswith(f"migrating the PostgreSQL database from {PRERELEASE} to ")
    upgraded = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    lines = upgraded.stdout.splitlines()
    assert lines[-1] == f"from {BASELINE} to {head_revision()}"
    after = await row_counts(old_database)
    print(f"\nrows before and after the upgrade: {before} -> {after}")
    assert {table: after[table] for table in before} == before
    new = set(after) - set(before)
    assert all(after[table] == 0 for table in new - {"shown_pages"})
    # Revision 0009 counts the pages a chat voted on (outside the ledger) as shown to it.
    assert after.get("shown_pages", 0) <= before.get("votes", 0)

    engine = create_engine(old_database)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(schema_differences) == []
        again = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
        assert again.stdout.splitlines() == [f"already at {head_revision()}"]

        listed = await run_cli_async("subscribers", env=env, cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        assert {line.split()[0] for line in listed.stdout.splitlines()} == CHATS
        assert "telegram:1004 state=paused" in listed.stdout
        assert 'telegram:1001 state=active mode=daily time=09:00 tz=UTC lang=en filter="' in (
            listed.stdout
        )

        async with FakeTelegram(token=TOKEN) as tg:
            env = env_for(clean_env, old_database, tg)
            digest = await run_cli_async("digest", "--now", env=env, cwd=tmp_path)
            assert digest.returncode == 0, digest.stderr
            assert digest.stdout.strip().endswith("0 failed, 0 left queued for retry")
            queued = before["outbox"]
            assert tg.delivered >= queued  # every message the earlier build left queued
            async with engine.connect() as conn:
                unsent = "SELECT count(*) FROM outbox WHERE status <> 'sent'"
                assert (await conn.execute(text(unsent))).scalar_one() == 0

            # A run delivers a broadcast queued after the upgrade.
            async with engine.begin() as conn:
                _, reach = await admin_store.broadcast_now(
                    conn, text="After the upgrade", audience=Audience(), created_by="shell"
                )
            assert reach == 4  # the paused chat is left out
            sent_before = tg.delivered
            run = start_cli(env=env, cwd=tmp_path, err=tmp_path / "run.log")
            try:
                await wait_until(
                    lambda: (
                        still_running(run, tmp_path / "run.log")
                        and tg.delivered >= sent_before + reach
                    ),
                    seconds=90,
                    what=f"{reach} messages delivered",
                )
            finally:
                run.send_signal(signal.SIGTERM)
                await asyncio.to_thread(run.wait, 60)
            log = (tmp_path / "run.log").read_text()
            assert run.returncode == 0, log[-3000:]
            assert "Traceback" not in log
    finally:
        await engine.dispose()
    final = await row_counts(old_database)
    assert final["chats"] == before["chats"] and final["chat_tags"] == before["chat_tags"]
    assert final["pages"] >= before["pages"] and final["votes"] == before.get("votes", 0)


@pytest.fixture
async def late_build(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    async for url in load_dump("831c0a4", backend, tmp_path):
        yield url


async def test_a_database_that_cannot_be_adopted_is_refused_unchanged(
    late_build: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    engine = create_async_engine(late_build)
    try:
        async with engine.begin() as conn:  # a column some local change added
            await conn.execute(text("ALTER TABLE chats ADD COLUMN nickname TEXT"))
    finally:
        await engine.dispose()
    before = await row_counts(late_build)
    env = env_for(clean_env, late_build)
    refused = await run_adopt(late_build, env=env, cwd=tmp_path)
    assert refused.returncode == 2
    # The copy the script keeps on SQLite is made before the refusal (its line on stdout);
    # on PostgreSQL, the advice.
    told = [
        line
        for line in [*refused.stdout.splitlines(), *refused.stderr.splitlines()]
        if any(notice in line for notice in NOTICES)
    ]
    assert len(told) == 1, (refused.stdout, refused.stderr)
    [refusal] = [line for line in refused.stderr.splitlines() if line not in told]
    assert "chats.nickname" in refusal and "Upgrading" in refusal
    assert await row_counts(late_build) == before
    engine = create_engine(late_build)
    try:
        assert await stamped_revision(engine) == PRERELEASE
        async with engine.connect() as conn:  # the index was not rebuilt either
            differences = await conn.run_sync(schema_differences)
        assert any(d[:2] == ("index defined otherwise", "ix_outbox_ready") for d in differences)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("stamp", ["0001", "none"])
async def test_the_bot_refuses_a_prerelease_database_with_one_line_and_changes_nothing(
    late_build: str, tmp_path: Path, clean_env: dict[str, str], stamp: str
) -> None:
    """Stamped ``0001``, or the bot's tables with no stamp at all: every command, ``run``
    included, names the script that adopts it, in one line, and neither copies nor changes
    the database."""
    if stamp == "none":
        engine = create_async_engine(late_build)
        try:
            async with engine.begin() as conn:
                await conn.execute(text("DROP TABLE alembic_version"))
        finally:
            await engine.dispose()
    before = await row_counts(late_build)
    env = env_for(clean_env, late_build)
    for args in (("db", "upgrade"), ("subscribers",), ("digest", "--now"), ("run",)):
        refused = await run_cli_async(*args, env=env, cwd=tmp_path, seconds=60)
        assert refused.returncode == 2, (args, refused.stderr)
        assert "Traceback" not in refused.stderr
        lines = [line for line in refused.stderr.splitlines() if "adopt_prerelease" in line]
        assert lines == [f"trendbot {args[0]}: {PRERELEASE_REFUSAL}"], refused.stderr
        assert "python scripts/adopt_prerelease.py DATABASE_URL" in lines[0]
        assert not [
            line
            for line in [*refused.stdout.splitlines(), *refused.stderr.splitlines()]
            if any(notice in line for notice in NOTICES)
        ]
    assert await row_counts(late_build) == before
    kept = await asyncio.to_thread(lambda: list(tmp_path.glob("*.before-*")))
    assert not kept  # nothing to keep: nothing was changed
    engine = create_engine(late_build)
    try:
        assert await stamped_revision(engine) == (PRERELEASE if stamp == "0001" else None)
        async with engine.connect() as conn:  # the index was not rebuilt either
            differences = await conn.run_sync(schema_differences)
        assert any(d[:2] == ("index defined otherwise", "ix_outbox_ready") for d in differences)
    finally:
        await engine.dispose()
    # The script adopts the unstamped database too; then it upgrades as any other.
    assert (await run_adopt(late_build, env=env, cwd=tmp_path)).returncode == 0
    upgraded = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout.splitlines()[-1] == f"from {BASELINE} to {head_revision()}"
    after = await row_counts(late_build)
    assert {table: after[table] for table in before} == before


@pytest.mark.parametrize("args", [("subscribers",), ("poll",)])
async def test_every_command_keeps_a_copy_before_it_migrates(
    previous_build: str, tmp_path: Path, clean_env: dict[str, str], args: tuple[str, ...]
) -> None:
    """Not only ``db upgrade``: any command that migrates an older SQLite database copies it
    first and names the copy on stderr; on PostgreSQL it says to back up with pg_dump."""
    done = await run_cli_async(*args, env=env_for(clean_env, previous_build), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    told = [line for line in done.stderr.splitlines() if any(n in line for n in NOTICES)]
    assert len(told) == 1, done.stderr
    assert " WARNING " in told[0] and "bot.store" in told[0]
    if previous_build.startswith("sqlite"):
        kept = Path(told[0].split(NOTICES[0], 1)[1])
        with sqlite3.connect(kept) as conn:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
                (BASELINE,)
            ]
        conn.close()
        assert kept.name.startswith(f"d9caa29.db.before-{BASELINE}-")
    else:
        assert told[0].endswith(
            f"migrating the PostgreSQL database from {BASELINE} to "
            f"{head_revision()} without a copy: back up with pg_dump before trendbot db "
            "upgrade (see docs/operating.md#backups)"
        )
        assert "#backups" in told[0] and "## Backups" in OPERATING.read_text(encoding="utf-8")
    again = await run_cli_async(*args, env=env_for(clean_env, previous_build), cwd=tmp_path)
    assert not [line for line in again.stderr.splitlines() if any(n in line for n in NOTICES)]


@pytest.mark.parametrize("args", [("subscribers",), ("export",), ("db", "upgrade")])
async def test_a_command_that_creates_the_database_names_it(
    tmp_path: Path, clean_env: dict[str, str], args: tuple[str, ...]
) -> None:
    """In a directory without a database (DATABASE_URL unset: ./data/trendbot.db) the new
    file is named in one line, once; on stderr, but in the report of ``db upgrade``."""
    env = {k: v for k, v in clean_env.items() if k != "DATABASE_URL"}
    done = await run_cli_async(*args, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    created = tmp_path / "data" / "trendbot.db"
    assert created.is_file()
    line = f"created a new database: {created.resolve()}"
    if args == ("db", "upgrade"):
        assert done.stdout.splitlines() == [line, f"from an empty database to {head_revision()}"]
    else:
        [told] = done.stderr.splitlines()
        assert told.endswith(f" WARNING bot.store: {line}")
    again = await run_cli_async(*args, env=env, cwd=tmp_path)
    assert again.stderr == "" and line not in again.stdout


async def test_a_newer_builds_database_is_refused_with_one_line(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = '0042_future'"))
    env = env_for(clean_env, database_url)
    for args in (("db", "upgrade"), ("subscribers",), ("digest", "--now"), ("run",)):
        refused = await run_cli_async(*args, env=env, cwd=tmp_path, seconds=60)
        assert refused.returncode == 2, (args, refused.stderr)
        lines = [line for line in refused.stderr.splitlines() if "0042_future" in line]
        assert len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert "newer build" in lines[0]
    assert await stamped_revision(engine) == "0042_future"
    kept = await asyncio.to_thread(lambda: list(tmp_path.glob("*.before-*")))
    assert not kept  # nothing to keep: nothing was changed


async def test_healthz_is_503_while_the_schema_does_not_match(engine: AsyncEngine) -> None:
    app = web.make_app(engine=engine, hooks=web.WebHooks())
    runner, port = await web.start(app, host="127.0.0.1", port=0)
    try:
        async with httpx.AsyncClient() as client:
            healthy = await client.get(f"http://127.0.0.1:{port}/healthz")
            assert healthy.status_code == 200
            assert healthy.json()["version"]
            async with engine.begin() as conn:  # a newer build migrated under this one
                await conn.execute(text("UPDATE alembic_version SET version_num = '0042_x'"))
            answer = await client.get(f"http://127.0.0.1:{port}/healthz")
        assert answer.status_code == 503
        assert answer.json()["schema"] == f"schema at 0042_x, this build needs {head_revision()}"
    finally:
        await runner.cleanup()


def test_the_baseline_is_the_head_while_no_revision_follows() -> None:
    assert BASELINE in {head_revision(), *_older_than_head()}


def _older_than_head() -> set[str]:
    from bot.store.engine import revisions

    return set(revisions().known)


@pytest.fixture
async def previous_build(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    async for url in load_dump("d9caa29", backend, tmp_path):
        yield url


async def test_the_previous_builds_pages_get_their_paper_and_nothing_is_new_again(
    previous_build: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    before = await row_counts(previous_build)
    env = env_for(clean_env, previous_build)
    upgraded = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout.splitlines()[-1] == f"from {BASELINE} to {head_revision()}"
    after = await row_counts(previous_build)
    assert {table: after[table] for table in before} == before
    engine = create_engine(previous_build)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(schema_differences) == []
            rows = (await conn.execute(text("SELECT key, arxiv, paper FROM pages"))).all()
        assert rows and any(arxiv for _, arxiv, _ in rows)
        for key, arxiv, paper in rows:
            assert paper == (f"arxiv:{arxiv.split('v')[0]}" if arxiv else f"path:{key}"), key
        # The same wiki from another place (the dump's was a checkout of its own): a second
        # source of the same papers, and each of its pages one of them.
        polled = await run_cli_async("poll", env=env, cwd=tmp_path)
        assert polled.returncode == 0, polled.stderr
        assert polled.stdout.splitlines()[-1].endswith("(baseline: nothing queued)")
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT source_id, paper FROM pages"))).all()
        by_source: dict[int, set[str]] = {}
        for source_id, paper in rows:
            by_source.setdefault(source_id, set()).add(paper)
        assert len(by_source) == 2
        old, new = by_source.values()
        assert {p for p in old if p.startswith("arxiv:")} == {
            p for p in new if p.startswith("arxiv:")
        }
    finally:
        await engine.dispose()


@pytest.fixture
async def last_0003_build(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    async for url in load_dump("5c873bc", backend, tmp_path):
        yield url


async def test_the_0003_builds_database_gets_an_empty_followers_history_then_today(
    last_0003_build: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    before = await row_counts(last_0003_build)
    assert "tag_followers" not in before
    env = env_for(clean_env, last_0003_build)
    upgraded = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout.splitlines()[-1] == f"from 0003_paper_identity to {head_revision()}"
    after = await row_counts(last_0003_build)
    assert {table: after[table] for table in before} == before
    assert after["tag_followers"] == 0
    engine = create_engine(last_0003_build)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(schema_differences) == []
        today = dt.datetime.now(dt.UTC).date()
        async with engine.begin() as conn:
            assert await trends.record_day(conn, today=today) is True
        async with engine.connect() as conn:
            found = await conn.execute(text("SELECT tag, chats FROM tag_followers ORDER BY tag"))
            recorded = dict(found.all())
            # The dump's chats: four active ones (one paused), each following its tags.
            active = await conn.execute(
                text(
                    "SELECT t.tag, count(*) FROM chat_tags t JOIN chats c ON c.id = t.chat_pk "
                    "WHERE c.state = 'active' AND t.kind <> 'excluded' GROUP BY t.tag"
                )
            )
            assert recorded == dict(active.all()) and recorded
    finally:
        await engine.dispose()


@pytest.fixture
async def last_0004_build(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    async for url in load_dump("1d764a6", backend, tmp_path):
        yield url


async def test_the_0004_builds_sources_are_active_until_a_poll_without_them(
    last_0004_build: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """The usual move: the dump's source (the sample wiki where that build had it) taken
    out for another with the same pages. Its pages leave every surface, no paper is
    counted twice, and nothing the chats had is queued again."""
    before = await row_counts(last_0004_build)
    env = env_for(clean_env, last_0004_build)
    upgraded = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout.splitlines()[-1] == f"from 0004_tag_followers to {head_revision()}"
    after = await row_counts(last_0004_build)
    assert {table: after[table] for table in before} == before
    engine = create_engine(last_0004_build)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(schema_differences) == []
            active = (await conn.execute(text("SELECT active FROM sources"))).scalars().all()
            papers = (
                await conn.execute(text("SELECT count(DISTINCT paper) FROM pages"))
            ).scalar_one()
        assert active == [True]  # recorded by the earlier build: active until a poll says
        polled = await run_cli_async("poll", "--backfill", "3650", env=env, cwd=tmp_path)
        assert polled.returncode == 0, polled.stderr
        assert polled.stdout.splitlines()[-1].endswith("(backfill: 0 notifications queued)")
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT name, active FROM sources"))).all()
        assert sorted(active for _, active in rows) == [False, True]
        assert [name for name, active in rows if active] == [str(SAMPLE_WIKI)]
        stats = await run_cli_async("stats", "--json", env=env, cwd=tmp_path)
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["pages"] == papers
        assert [s["name"] for s in json.loads(stats.stdout)["sources"]] == [str(SAMPLE_WIKI)]
    finally:
        await engine.dispose()


async def test_the_previous_builds_votes_stay_takeable_and_a_moved_slack_chat_keeps_its_history(
    last_0003_build: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """Revision 0009: every page a chat voted on before counts as received (its vote can
    be taken back), and the rows naming a Slack channel by the address it had before its
    workspace installed the app (``slack:C0GENERAL``) name it as it is now."""
    at = dt.datetime(2026, 12, 6, 12, 0)
    moved, elsewhere = "slack:T0TEST/C0GENERAL", "slack:C0OTHER"  # C0OTHER moved nowhere
    engine = create_engine(last_0003_build)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                insert(chats_table).values(
                    platform="slack",
                    chat_id="T0TEST/C0GENERAL",
                    kind="group",
                    state="active",
                    mode="daily",
                    digest_time="09:00",
                    timezone="UTC",
                    lang="en",
                    filter="rl",
                    created_at=at,
                    updated_at=at,
                    team_id="T0TEST",
                )
            )
            for chat in ("slack:C0GENERAL", "slack:C0GENERAL", elsewhere):
                await conn.execute(
                    insert(audit_log).values(
                        at=at,
                        actor="slack:U1",
                        chat=chat,
                        action=toggle.AUDIT_ACTION,
                        allowed=True,
                        detail='{"lang": "ko", "row": 1}',
                    )
                )
            voted = set((await conn.execute(text("SELECT chat_pk, page_id FROM votes"))).all())
        assert voted
        upgraded = await run_cli_async(
            "db", "upgrade", env=env_for(clean_env, last_0003_build), cwd=tmp_path
        )
        assert upgraded.returncode == 0, upgraded.stderr
        async with engine.connect() as conn:
            for chat_pk, page_id in voted:
                assert await feedback_store.delivered(conn, chat_pk=chat_pk, page_id=page_id)
            figures = await Admin(engine=engine, settings=Settings(_env_file=None)).figures(conn)  # type: ignore[call-arg]
        assert figures.toggles == [(moved, "ko", 2), (elsewhere, "ko", 1)]
    finally:
        await engine.dispose()


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_the_0004_builds_queued_messages_get_no_unknown_sends_and_go_once(
    last_0004_build: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """``outbox.unknown_sends`` (revision 0007): the messages the last build left queued
    had no send without an answer; they are sent once each, and nothing is held."""
    before = await row_counts(last_0004_build)
    assert before["outbox"] > 0
    env = env_for(clean_env, last_0004_build)
    upgraded = await run_cli_async("db", "upgrade", env=env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout.splitlines()[-1] == f"from 0004_tag_followers to {head_revision()}"
    after = await row_counts(last_0004_build)  # tables added since start empty or filled
    assert {table: after[table] for table in before} == before
    engine = create_engine(last_0004_build)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(schema_differences) == []
            found = await conn.execute(text("SELECT DISTINCT unknown_sends FROM outbox"))
            assert found.scalars().all() == [0]
        async with FakeTelegram(token=TOKEN) as tg:
            env = env_for(clean_env, last_0004_build, tg)
            digest = await run_cli_async("digest", "--now", env=env, cwd=tmp_path)
            assert digest.returncode == 0, digest.stderr
            assert digest.stdout.strip().endswith("0 failed, 0 left queued for retry")
            per_chat = [c.chat_id for c in tg.calls("sendMessage", ok=True)]
        async with engine.connect() as conn:
            statuses = await conn.execute(text("SELECT DISTINCT status FROM outbox"))
            assert statuses.scalars().all() == ["sent"]
    finally:
        await engine.dispose()
    assert len(per_chat) >= before["outbox"]  # each queued message, none twice or held
