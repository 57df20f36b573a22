"""Composition root: settings -> store -> sources -> services. Only this module builds adapters."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.poll import Poller
from bot.settings import Settings
from bot.sources.feed import make_feed_client
from bot.store.engine import create_engine, upgrade


@dataclass(slots=True)
class App:
    settings: Settings
    engine: AsyncEngine
    http: httpx.AsyncClient
    poller: Poller


@asynccontextmanager
async def open_app(
    settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> AsyncIterator[App]:
    """Open the store (migrated to the latest schema) and build the services on it."""
    engine = create_engine(settings.database_url)
    http = make_feed_client(transport=transport)
    try:
        await upgrade(engine)
        poller = Poller(
            engine=engine,
            sources=settings.wiki_sources,
            base_url=settings.wiki_base_url,
            default_lang=settings.default_language,
            http=http,
        )
        yield App(settings=settings, engine=engine, http=http, poller=poller)
    finally:
        await http.aclose()
        await engine.dispose()
