"""Composition root: settings -> store -> sources, planner, delivery, channels.

Only this module builds adapters. Every command of the CLI opens the same :class:`App`
(migrating the database first) and uses the parts it needs.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO, TypeVar

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.console.chat import ConsoleSender
from bot.channels.platform import Connection, Opening
from bot.channels.registry import PLATFORMS
from bot.commands import CommandCore, Defaults
from bot.commands.operator import Admin
from bot.delivery.engine import Delivery
from bot.delivery.sender import Sender
from bot.matching.planner import Planner
from bot.models import Platform
from bot.ops.alert_service import AlertService
from bot.settings import Settings
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import backup
from bot.store.engine import create_engine

if TYPE_CHECKING:
    from collections.abc import Callable

    from bot.channels.console.chat import ConsoleChannel

C = TypeVar("C")

log = logging.getLogger(__name__)


@dataclass(slots=True)
class App:
    settings: Settings
    engine: AsyncEngine
    # What opening did to the schema ("from REV to REV"), None when it was current: the
    # service logs it after its version line, once nothing can fail at start any more.
    migrated: str | None
    http: httpx.AsyncClient
    poller: Poller
    planner: Planner
    core: CommandCore
    admin: Admin
    alerts: AlertService
    senders: dict[Platform, Sender] = field(default_factory=dict)
    # The platforms the settings configure, opened (bot.channels.registry), by name.
    platforms: dict[Platform, Connection] = field(default_factory=dict)

    def delivery(self, *, concurrency: int = 64) -> Delivery:
        return Delivery(
            engine=self.engine,
            senders=self.senders,
            concurrency=concurrency,
            on_broadcast_row=self.admin.broadcast_row_done,
            on_auth_failure=self.alerts.auth_failed,
        )

    def connected(self, kind: type[C]) -> C | None:
        """The opened platform of type ``kind`` (``SlackConnection``...), None where the
        settings do not configure it."""
        for connection in self.platforms.values():
            if isinstance(connection, kind):
                return connection
        return None

    def console_channel(self, *, on_command: Callable[[], None]) -> ConsoleChannel:
        """The terminal's chat; the 👍 and 👎 of the digests it prints can be pressed."""
        from bot.channels.console.chat import ConsoleChannel

        console = ConsoleChannel(core=self.core, on_command=on_command)
        printer = self.senders.get(Platform.CONSOLE)
        if isinstance(printer, ConsoleSender):
            printer.on_buttons = console.offer_votes
        return console


@asynccontextmanager
async def open_app(
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    console_out: TextIO | None = None,
) -> AsyncIterator[App]:
    """Open the store (migrated to the latest schema) and build the services on it."""
    engine = create_engine(settings.database_url)
    http = make_feed_client(transport=transport)
    opening = Opening(settings=settings, engine=engine, console_out=console_out)
    connections: dict[Platform, Connection] = {
        spec.rules.name: spec.connect(opening) for spec in PLATFORMS if spec.rules.enabled(settings)
    }
    try:
        migrated = await backup.migrate(engine, settings.database_url, tell=backup.to_log)
        planner = Planner(engine=engine, welcome_days=settings.welcome_digest_days)
        admin = Admin(engine=engine, settings=settings)
        app = App(
            settings=settings,
            engine=engine,
            # On PostgreSQL one replica migrates, the others find it done.
            migrated=migrated.line() if migrated.changed else None,
            http=http,
            poller=Poller(
                engine=engine,
                sources=settings.wiki_sources,
                base_url=settings.wiki_base_url,
                default_lang=settings.default_language,
                http=http,
                allow_cross_host_redirects=settings.feed_allow_cross_host_redirects,
                data_dir=settings.data_dir,
            ),
            planner=planner,
            core=CommandCore(
                engine=engine,
                defaults=Defaults(
                    digest_time=settings.digest_time,
                    timezone=settings.default_timezone,
                    lang=settings.default_language,
                ),
                digests=planner,
                admin=admin,
                public_base_url=settings.public_base_url,
            ),
            admin=admin,
            alerts=AlertService(engine=engine, settings=settings),
            senders={name: c.sender for name, c in connections.items()},
            platforms=connections,
        )
        yield app
    finally:
        for connection in connections.values():
            await connection.close()
        await http.aclose()
        await engine.dispose()
