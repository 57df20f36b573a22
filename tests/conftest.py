"""Shared fixtures: a real database on each backend, clean settings, the fakes of the outside."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.registry import settings_class
from bot.store.engine import create_engine, upgrade
from tests.scratch import DatabasePool, scratch_database

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The settings the CLI reads (bot/__main__.py): the core's variables and every platform's
# section (bot.channels.registry.settings_class). Tests build them as ``Settings(...)`` and
# ``load_settings(Settings, ...)``.
Settings = settings_class()
# Every variable of the contract: removed from the environment of each test.
CONTRACT_VARIABLES = tuple(name.upper() for name in Settings.model_fields)
NO_POSTGRES = (
    "TEST_DATABASE_URL is not set; set it to a PostgreSQL URL such as "
    "postgresql+asyncpg://postgres@127.0.0.1:5432/test to run the PostgreSQL variant"
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CONTRACT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # As `trendbot` itself sets it (bot/__main__.py): without it python-telegram-bot 22
    # warns when it builds RetryAfter, and warnings are errors in this suite.
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
def clean_env() -> Iterator[dict[str, str]]:
    """An environment for subprocesses: this one without any contract variable."""
    env = {k: v for k, v in os.environ.items() if k not in CONTRACT_VARIABLES}
    env["PYTHONUNBUFFERED"] = "1"
    # The command-line runs of the suite read their Telegram digests as HTML text (the fake
    # records what each sendMessage said); test_telegram_rich_run runs the default, rich
    # messages, from the command line.
    env["TELEGRAM_RICH_MESSAGES"] = "off"
    yield env


@pytest.fixture(scope="session")
def postgres_pool() -> Iterator[DatabasePool | None]:
    """Scratch PostgreSQL databases for the whole run, emptied between tests (creating one
    per test took most of the suite's time); None without TEST_DATABASE_URL."""
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        yield None
        return
    pool = DatabasePool(base)
    yield pool
    asyncio.run(pool.close())


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, postgres_pool: DatabasePool | None
) -> AsyncIterator[str]:
    """A fresh, empty database URL on each backend."""
    if request.param == "sqlite":
        async with scratch_database(None, directory=tmp_path) as url:
            yield url
        return
    if postgres_pool is None:
        pytest.skip(NO_POSTGRES)
    url = await postgres_pool.take()
    try:
        yield url
    finally:
        await postgres_pool.give_back(url)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """A migrated database on each backend."""
    eng = create_engine(database_url)
    await upgrade(eng)
    try:
        yield eng
    finally:
        await eng.dispose()
