"""Telegram: messages out (:class:`TelegramSender`) and commands in (:class:`TelegramChannel`).

Both sides share one :class:`telegram.Bot` from :func:`make_bot`, so one connection pool
serves the delivery workers and the replies to commands. python-telegram-bot's errors are
translated here, at the boundary, into the ``bot.errors`` tree; nothing past this module
parses a Telegram error text. No error reason or log line carries the bot token (the
library's messages can include request URLs): :func:`redact` runs over every text that
leaves this module.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import warnings
from typing import Any, Literal, TypeAlias
from urllib.parse import quote

import aiohttp
import httpx
from telegram import (
    Bot,
    Chat,
    Message,
)
from telegram import error as tg_error
from telegram.ext import ContextTypes
from telegram.warnings import PTBDeprecationWarning

from bot.channels.telegram.request import AiohttpRequest
from bot.channels.telegram.settings import TelegramSettings
from bot.errors import (
    ChatGone,
    ChatMigrated,
    DeliveryError,
    OutcomeUnknown,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)

log = logging.getLogger("bot.channels.telegram")

PRIVATE_CHAT_INTERVAL = 1.0  # Bot API: about one message a second to one chat
GROUP_CHAT_INTERVAL = 3.0  # Bot API: at most 20 messages a minute to one group
# The topics of a forum are chats of their own here, but Telegram counts the 20 a minute
# for the whole group (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this):
# they share the group's slot (:meth:`TelegramSender.slot_key`).
# The delivery engine runs up to bot.delivery.engine.MAX_IN_FLIGHT (1,024) sends at once, as many as
# cap x latency needs (with 96, a 1,000/s cap at 100 ms reached 0.6); replies to commands
# need room beside them. Connections are opened as they are needed.
CONNECTION_POOL_SIZE = 1024 + 32
CONNECT_TIMEOUT = 5.0
# sendMessage answers in well under a second, but a busy Telegram has answered in tens of
# seconds and delivered the message all the same (python-telegram-bot#1045: its 5-s default
# raised TimedOut for messages that arrived). Waiting less turns a slow answer into a message
# whose outcome is unknown (``OutcomeUnknown``), which may arrive twice: so sends wait as
# long as slack-sdk's default (30 s).
READ_TIMEOUT = 30.0
# getUpdates (long polling) waits less beyond its long poll: nothing is lost by asking again,
# and a stop waits for the last one (within the 15 s a stop takes in all).
UPDATES_READ_TIMEOUT = 15.0
# A message whose earlier send had no answer is sent again once, waiting this long for it.
RESEND_READ_TIMEOUT = 90.0
WRITE_TIMEOUT = 15.0
# With every connection busy a send waits this long for one, then fails unsent (not ambiguous).
POOL_TIMEOUT = 10.0
# getUpdates holds the request this long when there is nothing to deliver.
LONG_POLL_SECONDS = 10
# Who may change a group's subscription is asked of Telegram at most once a minute per user;
# a demoted administrator keeps the right at most this long.
ADMIN_CACHE_SECONDS = 60.0
ADMIN_CACHE_MAX = 4096
# Updates processed at once; updates of one chat are processed one after another.
CONCURRENT_UPDATES = 32
# Telegram's retry_after is whole seconds, at least 1; a zero or odd value still waits this.
MIN_RETRY_AFTER_SECONDS = 1.0
# The update types the bot asks for; anything else is never fetched.
ALLOWED_UPDATES = ("message", "callback_query", "my_chat_member")
# Bot API: a command in the menu is 1-32 characters of a-z, 0-9 and _.
COMMAND_NAME_RE = re.compile(r"^[a-z0-9_]{1,32}$")
MAX_COMMAND_DESCRIPTION = 256  # Bot API BotCommand.description
MAX_ALERT_CHARS = 200  # Bot API answerCallbackQuery text
MAX_CAPTION_CHARS = 1024  # Bot API sendPhoto caption, after entity parsing
CHART_FILENAME = "chart.png"
# A vote's toast says what the press did, which only the store knows: the answer waits this
# long for it, then goes plain (Telegram refuses answers that come too late).
VOTE_TOAST_WAIT_SECONDS = 2.0
# Webhook update_ids remembered per process, to act once on an update Telegram sends twice
# (it retries a delivery it did not see answered). Updates arrive in order, a few at a time.
SEEN_UPDATES_MAX = 10_000
# A forum topic's chat id: the group's id, this separator, the topic's message_thread_id.
TOPIC_SEPARATOR = "/"
# TELEGRAM_RICH_MESSAGES: whether digests go as one rich message (sendRichMessage).
RichMode: TypeAlias = Literal["auto", "on", "off"]
# Chats that refused a rich digest (400) one after another, none taking one in between, after
# which every chat gets HTML: a payload that many chats refuse is refused by the server (one
# from before Bot API 10.2 or 10.3, which knows the method but not explicit blocks or button
# rows), not by the chats.
RICH_REFUSALS_FOR_ALL = 3

# BadRequest texts that mean the chat cannot be reached any more (lower case).
_GONE_MARKERS = (
    "chat not found",
    "user is deactivated",
    "bot was kicked",
    "bot was blocked",
    "group chat was deactivated",
    "peer_id_invalid",
    "chat_write_forbidden",
    "have no rights to send a message",
    "not enough rights to send",
    "need administrator rights in the channel chat",
)
# BadRequest texts that mean a forum topic cannot be posted to any more (lower case): the
# topic was closed, or deleted (tdlib/telegram-bot-api#472, #854).
_TOPIC_CLOSED_MARKERS = ("topic_closed",)
_TOPIC_GONE_MARKERS = ("message thread not found", "topic_deleted", "topic_id_invalid")
_TOKEN_IN_TEXT = re.compile(r"\d{3,20}(?::|%3[aA])[A-Za-z0-9_-]{10,}")
_REDACTED = "[token]"
# A BadRequest text (lower case): an edit that would leave the message as it is.
_NOT_MODIFIED = "message is not modified"
# Transport timeouts before a request went out: no connection was had (httpx: connecting or
# waiting for the pool; aiohttp: both are its connect timeout).
_UNSENT_TIMEOUTS = (httpx.ConnectTimeout, httpx.PoolTimeout, aiohttp.ConnectionTimeoutError)

# What python-telegram-bot passes every handler beside the update.
HandlerContext: TypeAlias = ContextTypes.DEFAULT_TYPE


# ---------------------------------------------------------------------------- the bot


def make_bot(settings: TelegramSettings) -> Bot:
    """The one :class:`telegram.Bot` of the process, for the sender and the channel.

    Requests go to ``settings.telegram_api_base_url`` through a pool of
    :data:`CONNECTION_POOL_SIZE` connections over aiohttp (:class:`AiohttpRequest`: httpx,
    python-telegram-bot's default, costs several times the CPU per request and capped a
    process below 200 messages a second; ``bench/fanout.py`` measures both); long polling
    has its own connection, also over aiohttp, so it never waits behind sends. The bot is
    not initialised here (no request is made): :meth:`TelegramChannel.start` does it, and
    sends work before that.
    """
    if settings.telegram_bot_token is None:
        raise ValueError("TELEGRAM_BOT_TOKEN is not set")
    request = AiohttpRequest(
        connection_pool_size=CONNECTION_POOL_SIZE,
        connect_timeout=CONNECT_TIMEOUT,
        read_timeout=READ_TIMEOUT,
        write_timeout=WRITE_TIMEOUT,
        pool_timeout=POOL_TIMEOUT,
    )
    # getUpdates adds its long-poll timeout to this read timeout by itself.
    updates_request = AiohttpRequest(
        connection_pool_size=1,
        connect_timeout=CONNECT_TIMEOUT,
        read_timeout=UPDATES_READ_TIMEOUT,
        write_timeout=WRITE_TIMEOUT,
        pool_timeout=POOL_TIMEOUT,
    )
    return Bot(
        settings.telegram_bot_token.get_secret_value(),
        base_url=settings.telegram_api_base_url,
        request=request,
        get_updates_request=updates_request,
    )


async def close_bot(bot: Bot) -> None:
    """Close the bot's connections, whether or not it was initialised. Idempotent.

    ``Bot.shutdown`` alone skips a bot that only ever sent (never ``initialize``d), and
    would leave the delivery's connections open.
    """
    await bot.shutdown()
    await bot.request.shutdown()


def redact(text: str, token: str | None = None) -> str:
    """``text`` without the bot token, whether plain, URL-quoted or any token-shaped string."""
    if token:
        text = text.replace(token, _REDACTED).replace(quote(token, safe=""), _REDACTED)
    return _TOKEN_IN_TEXT.sub(_REDACTED, text)


def _chat_ref(chat_id: str) -> int | str:
    """Telegram chat ids are integers; ``@channelname`` stays a string."""
    try:
        return int(chat_id)
    except ValueError:
        return chat_id


def split_chat_id(chat_id: str) -> tuple[int | str, int | None]:
    """A stored chat id as Telegram's ``chat_id`` and ``message_thread_id``.

    A forum topic is a chat of its own, stored as ``-100123/45`` (group ``-100123``, topic
    45); any other chat has no thread.
    """
    head, separator, topic = chat_id.partition(TOPIC_SEPARATOR)
    if separator and topic.isdigit():
        return _chat_ref(head), int(topic)
    return _chat_ref(chat_id), None


def topic_chat_id(chat_id: int, thread_id: int | None) -> str:
    """The stored id of a chat, or of one topic of a forum (``-100123/45``)."""
    return str(chat_id) if thread_id is None else f"{chat_id}{TOPIC_SEPARATOR}{thread_id}"


def topic_of(message: Message) -> int | None:
    """The forum topic a message is in; None outside forums and in the General topic.

    Replies in an ordinary supergroup carry a ``message_thread_id`` too; only
    ``is_topic_message`` says it is a topic (https://core.telegram.org/bots/api#message).
    """
    if message.is_topic_message and message.chat.type == Chat.SUPERGROUP:
        return message.message_thread_id
    return None


def _retry_after_seconds(exc: tg_error.RetryAfter) -> float:
    # PTB 22 gives an int (deprecated, with a warning) or a timedelta (PTB_TIMEDELTA=true).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value: Any = exc.retry_after
    seconds = value.total_seconds() if isinstance(value, dt.timedelta) else float(value)
    return max(seconds, MIN_RETRY_AFTER_SECONDS)


def is_not_modified(exc: tg_error.TelegramError) -> bool:
    """A 400 for an edit that changes nothing: the message already reads so, which is no
    failure."""
    return isinstance(exc, tg_error.BadRequest) and _NOT_MODIFIED in str(exc).lower()


def is_not_found(exc: tg_error.TelegramError) -> bool:
    """A 404 ``Not Found``: a method the Bot API server does not have. Posted through the
    bot's request object, python-telegram-bot raises ``InvalidToken`` with the server's
    text (a 401 says ``Unauthorized``); through ``Bot.do_api_request``, ``EndPointNotFound``
    once the bot is initialised, and before that an ``InvalidToken`` chained to the first."""
    if isinstance(exc, tg_error.EndPointNotFound):
        return True
    return any(
        isinstance(error, tg_error.InvalidToken) and "not found" in str(error).lower()
        for error in (exc, exc.__cause__)
    )


def _is_gone(message: str) -> bool:
    lowered = message.lower()
    return any(marker in lowered for marker in _GONE_MARKERS)


def translate_error(
    exc: tg_error.TelegramError, *, token: str | None = None, method: str | None = None
) -> DeliveryError:
    """A python-telegram-bot error as the ``bot.errors`` class the delivery engine acts on.

    Each carries a ``code`` the metrics count by (``blocked``, ``rate_limited``,
    ``timeout``...); the reason starts with the same label, then Telegram's own text with
    the token redacted. ``method`` (``sendPhoto``) is the Bot API method that failed, which
    the reason names where python-telegram-bot's error alone would mislead (a 404).
    """
    text = redact(str(exc), token)
    if is_not_found(exc):
        # python-telegram-bot raises InvalidToken for a 404 as for a 401, but Telegram
        # answers 404 for a method this Bot API server does not have (or an address that is
        # no Bot API): the token is not what failed. Sending stops all the same and the
        # messages stay queued: nothing will go through that address until it is fixed.
        what = f"{method} answered" if method else "the Bot API answered"
        return PlatformAuthFailed(
            f"not_found: {what} 404 Not Found: this Bot API server has no such method "
            f"(TELEGRAM_API_BASE_URL); the bot token was not refused ({text})",
            code="not_found",
        )
    if isinstance(exc, tg_error.RetryAfter):
        seconds = _retry_after_seconds(exc)
        return RateLimited(
            f"rate_limited: retry after {seconds:g}s", retry_after=seconds, code="rate_limited"
        )
    if isinstance(exc, tg_error.ChatMigrated):
        return ChatMigrated(
            f"migrated: now supergroup {exc.new_chat_id}",
            new_chat_id=str(exc.new_chat_id),
            code="migrated",
        )
    if isinstance(exc, tg_error.Forbidden):
        return ChatGone(f"blocked: {text}", code="blocked")
    if isinstance(exc, tg_error.InvalidToken):
        # 401 Unauthorized: the token was revoked or is wrong. No chat is to blame: sending
        # to Telegram stops as a whole and the messages stay queued (see bot/delivery/engine.py).
        return PlatformAuthFailed(
            f"unauthorized: the bot token was rejected ({text})", code="unauthorized"
        )
    if isinstance(exc, tg_error.BadRequest):
        lowered = text.lower()
        if any(marker in lowered for marker in _TOPIC_CLOSED_MARKERS):
            return ChatGone(f"topic closed: {text}", code="topic_closed")
        if any(marker in lowered for marker in _TOPIC_GONE_MARKERS):
            return ChatGone(f"topic deleted: {text}", code="topic_deleted")
        if _is_gone(text):
            return ChatGone(f"gone: {text}", code="gone")
        return PermanentError(f"bad_request: {text}", code="bad_request")
    if isinstance(exc, tg_error.TimedOut):
        # A request that timed out while connecting or waiting for a pooled connection was
        # never sent; one that timed out later may have reached Telegram.
        if isinstance(exc.__cause__, _UNSENT_TIMEOUTS):
            return TransientError(f"timeout: {text}", code="timeout")
        return OutcomeUnknown(f"timeout: {text}", code="timeout")
    if isinstance(exc, tg_error.NetworkError):  # 5xx, connection refused or dropped
        return TransientError(f"network: {text}", code="network")
    if isinstance(exc, tg_error.EndPointNotFound | tg_error.Conflict):
        return PermanentError(f"telegram: {text}", code="telegram")
    return TransientError(f"telegram: {text}", code="telegram")  # e.g. an unreadable answer


def log_extra(chat_id: int | str) -> dict[str, object]:
    """The ``extra`` of a log line about one chat."""
    return {"chat": f"telegram:{chat_id}", "platform": "telegram"}


__all__ = [
    "ALLOWED_UPDATES",
    "GROUP_CHAT_INTERVAL",
    "PRIVATE_CHAT_INTERVAL",
    "HandlerContext",
    "close_bot",
    "is_not_found",
    "is_not_modified",
    "log_extra",
    "make_bot",
    "redact",
    "split_chat_id",
    "topic_chat_id",
    "topic_of",
    "translate_error",
]
