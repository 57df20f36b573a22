"""pytest fixtures for the fake Telegram and Slack servers.

Import them into a conftest: ``from tests.fakes.fixtures import fake_slack, fake_telegram``.
Each test gets its own server on a fresh port, stopped after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram


@pytest_asyncio.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    """A started :class:`FakeTelegram` with the default token (``telegram_api.DEFAULT_TOKEN``)."""
    async with FakeTelegram() as server:
        yield server


@pytest_asyncio.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """A started :class:`FakeSlack` with the default token (``slack_api.DEFAULT_TOKEN``)."""
    async with FakeSlack() as server:
        yield server


__all__ = ["fake_slack", "fake_telegram"]
