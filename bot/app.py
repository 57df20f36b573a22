"""Composition root: settings -> store -> sources, planner, delivery, channels.

Only this module builds adapters. Every command of the CLI opens the same :class:`App`
(migrating the database first) and uses the parts it needs.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

# The platforms' renderers register with bot.render as their packages load; their channels
# load only where a platform is configured (see ``open_app``).
import bot.channels.slack
import bot.channels.telegram  # noqa: F401
from bot.channels.console import ConsoleSender
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
from bot.store.engine import create_engine, upgrade

# The chat libraries load only where a platform is configured (see ``open_app``).
if TYPE_CHECKING:
    from collections.abc import Callable

    from slack_sdk.web.async_client import AsyncWebClient
    from telegram import Bot

    from bot.channels.console import ConsoleChannel
    from bot.channels.slack.channel import SlackChannel
    from bot.channels.slack.install import StateStore
    from bot.channels.slack.oauth import Workspaces
    from bot.channels.telegram.channel import TelegramChannel

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
    telegram_bot: Bot | None = None
    slack_client: AsyncWebClient | None = None
    slack_workspaces: Workspaces | None = None  # installed by OAuth (SLACK_CLIENT_ID)
    slack_states: StateStore | None = None

    def delivery(self, *, concurrency: int = 64) -> Delivery:
        return Delivery(
            engine=self.engine,
            senders=self.senders,
            concurrency=concurrency,
            on_broadcast_row=self.admin.broadcast_row_done,
            on_auth_failure=self.alerts.auth_failed,
        )

    # The inbound side: each platform's channel on the one command core.

    def telegram_channel(self) -> TelegramChannel:
        """The Telegram channel (polling or webhook, as configured); Telegram must be."""
        from bot.channels.telegram.channel import TelegramChannel
        from bot.channels.telegram.sender import TelegramSender

        assert self.telegram_bot is not None, "TELEGRAM_BOT_TOKEN is not set"
        sender = self.senders.get(Platform.TELEGRAM)
        return TelegramChannel(
            settings=self.settings,
            core=self.core,
            bot=self.telegram_bot,
            pacing=sender.pacing if isinstance(sender, TelegramSender) else None,
        )

    def slack_channel(self) -> SlackChannel:
        """The Slack channel, sharing the sender's view of the token; Slack must be set up."""
        from bot.channels.slack.channel import SlackChannel
        from bot.channels.slack.sender import SlackSender

        assert self.slack_client is not None, "Slack is not configured"
        sender = self.senders.get(Platform.SLACK)
        return SlackChannel(
            settings=self.settings,
            core=self.core,
            client=self.slack_client,
            auth=sender.auth if isinstance(sender, SlackSender) else None,
            workspaces=self.slack_workspaces,
            state_store=self.slack_states,
            pacing=sender.pacing if isinstance(sender, SlackSender) else None,
        )

    def console_channel(self, *, on_command: Callable[[], None]) -> ConsoleChannel:
        """The terminal's chat; the 👍 and 👎 of the digests it prints can be pressed."""
        from bot.channels.console import ConsoleChannel

        console = ConsoleChannel(core=self.core, on_command=on_command)
        printer = self.senders.get(Platform.CONSOLE)
        if isinstance(printer, ConsoleSender):
            printer.on_buttons = console.offer_votes
        return console


def _senders(
    settings: Settings,
    *,
    console_out: TextIO | None,
    telegram_bot: Bot | None,
    slack_client: AsyncWebClient | None,
    slack_workspaces: Workspaces | None = None,
) -> dict[Platform, Sender]:
    senders: dict[Platform, Sender] = {Platform.CONSOLE: ConsoleSender(out=console_out)}
    if telegram_bot is not None:
        from bot.channels.telegram.sender import TelegramSender

        senders[Platform.TELEGRAM] = TelegramSender(
            telegram_bot,
            rate_per_second=settings.telegram_rate_per_second,
            paid_broadcast=settings.telegram_paid_broadcast,
            rich=settings.telegram_rich_messages,
        )
    if slack_client is not None:
        from bot.channels.slack.sender import SlackSender

        senders[Platform.SLACK] = SlackSender(
            slack_client,
            per_channel_rate=settings.slack_rate_per_second,
            workspace_rate=settings.slack_workspace_rate_per_second,
            workspaces=slack_workspaces,
        )
    return senders


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
    telegram_bot: Bot | None = None
    slack_client: AsyncWebClient | None = None
    slack_workspaces: Workspaces | None = None
    slack_states: StateStore | None = None
    if settings.telegram_enabled:
        from bot.channels.telegram.client import make_bot

        telegram_bot = make_bot(settings)
    if settings.slack_enabled:
        from bot.channels.slack.client import make_client

        slack_client = make_client(settings)
    if settings.slack_oauth and slack_client is not None:
        slack_workspaces, slack_states = _slack_oauth(settings, engine, slack_client)
    try:
        migrated = await upgrade(engine)
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
            senders=_senders(
                settings,
                console_out=console_out,
                telegram_bot=telegram_bot,
                slack_client=slack_client,
                slack_workspaces=slack_workspaces,
            ),
            telegram_bot=telegram_bot,
            slack_client=slack_client,
            slack_workspaces=slack_workspaces,
            slack_states=slack_states,
        )
        yield app
    finally:
        if telegram_bot is not None:
            from bot.channels.telegram.client import close_bot

            await close_bot(telegram_bot)
        await http.aclose()
        await engine.dispose()


def _slack_oauth(
    settings: Settings, engine: AsyncEngine, client: AsyncWebClient
) -> tuple[Workspaces, StateStore]:
    """The installed workspaces and the OAuth state store, on the project's database."""
    from bot.channels.slack.install import StateStore
    from bot.channels.slack.oauth import Workspaces
    from bot.store.installations import TokenCipher

    assert settings.slack_token_key and settings.slack_client_secret and settings.slack_state_secret
    assert settings.slack_client_id is not None
    workspaces = Workspaces(
        engine=engine,
        cipher=TokenCipher(settings.slack_token_key.get_secret_value()),
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret.get_secret_value(),
        client=client,
    )
    states = StateStore(engine=engine, secret=settings.slack_state_secret.get_secret_value())
    return workspaces, states
