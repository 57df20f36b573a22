"""Telegram opened for the service: the bot (python-telegram-bot), its sender and its
channel, polling or on the webhook as configured."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web
from telegram import Bot

from bot.channels.platform import Inbound, Opening, RequestHook, Route
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.channels.telegram.settings import TelegramSettings
from bot.commands import CommandCore

# Bot API setWebhook secret_token: sent back in this header with every update.
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header's name


@dataclass(slots=True)
class TelegramConnection:
    settings: TelegramSettings
    bot: Bot
    sender: TelegramSender
    webhook: Route  # the spec's route, given by it: this module never imports the spec

    def inbound(self, core: CommandCore) -> Inbound:
        """The channel on ``core``: on the webhook where ``TELEGRAM_WEBHOOK_URL`` is set,
        else long-polling (by the leader)."""
        channel = self.channel(core)
        webhook = bool(self.settings.telegram_webhook_url)
        return Inbound(
            channel=channel,
            running=lambda: channel.application.running,
            polling=None if webhook else channel,
            routes={self.webhook: webhook_hook(channel)} if webhook else {},
        )

    def channel(self, core: CommandCore) -> TelegramChannel:
        return TelegramChannel(
            settings=self.settings, core=core, bot=self.bot, pacing=self.sender.pacing
        )

    async def close(self) -> None:
        await close_bot(self.bot)


def webhook_hook(channel: TelegramChannel) -> RequestHook:
    """``POST /telegram/webhook``: the update to the channel, its status as the answer."""

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        status = await channel.process_webhook(body, request.headers.get(SECRET_HEADER))
        return web.Response(status=status)

    return handle


def connect(opening: Opening, *, webhook: Route) -> TelegramConnection:
    settings = opening.settings
    assert isinstance(settings, TelegramSettings)  # opened only where its section is read (enabled)
    bot = make_bot(settings)
    sender = TelegramSender(
        bot,
        rate_per_second=settings.telegram_rate_per_second,
        paid_broadcast=settings.telegram_paid_broadcast,
        rich=settings.telegram_rich_messages,
    )
    return TelegramConnection(settings=settings, bot=bot, sender=sender, webhook=webhook)
