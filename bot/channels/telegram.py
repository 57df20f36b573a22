"""Telegram: messages out (:class:`TelegramSender`) and commands in (:class:`TelegramChannel`).

Both sides share one :class:`telegram.Bot` from :func:`make_bot`, so one connection pool
serves the delivery workers and the replies to commands. python-telegram-bot's errors are
translated here, at the boundary, into the ``bot.errors`` tree; nothing past this module
parses a Telegram error text. No error reason or log line carries the bot token (the
library's messages can include request URLs): :func:`redact` runs over every text that
leaves this module.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hmac
import json
import logging
import re
import sys
import time
import traceback
import warnings
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Literal, TypeAlias
from urllib.parse import quote

import aiohttp
import httpx
import orjson
from telegram import (
    Bot,
    BotCommand,
    BotCommandScope,
    BotCommandScopeAllChatAdministrators,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    CallbackQuery,
    Chat,
    ChatMember,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    MessageEntity,
    Update,
)
from telegram import error as tg_error
from telegram.constants import ParseMode
from telegram.ext import (
    Application,
    ApplicationBuilder,
    BaseUpdateProcessor,
    CallbackQueryHandler,
    ChatMemberHandler,
    ContextTypes,
    MessageHandler,
    filters,
)
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter
from telegram.warnings import PTBDeprecationWarning

from bot import charts, render
from bot.admin import CANCEL as BROADCAST_CANCEL
from bot.admin import SEND as BROADCAST_SEND
from bot.channels.telegram_request import AiohttpRequest
from bot.commands import FEEDBACK_RESET, TOGGLE, Caller, CommandCore, registry
from bot.errors import (
    ChatGone,
    ChatMigrated,
    ConfigError,
    DeliveryError,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.i18n import LANGUAGES, SOURCE, negotiate, t
from bot.models import (
    Chart,
    ChatKind,
    ChatSettings,
    Outgoing,
    Platform,
    Reply,
    Toast,
)
from bot.pacing import Pacing, Replies
from bot.render import toggle, votes
from bot.settings import Settings

log = logging.getLogger("bot.channels.telegram")

PRIVATE_CHAT_INTERVAL = 1.0  # Bot API: about one message a second to one chat
GROUP_CHAT_INTERVAL = 3.0  # Bot API: at most 20 messages a minute to one group
# The topics of a forum are chats of their own here, but Telegram counts the 20 a minute
# for the whole group (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this):
# they share the group's slot (:meth:`TelegramSender.slot_key`).
# The delivery engine runs up to bot.delivery.MAX_IN_FLIGHT (1,024) sends at once, as many as
# cap x latency needs (with 96, a 1,000/s cap at 100 ms reached 0.6); replies to commands
# need room beside them. Connections are opened as they are needed.
CONNECTION_POOL_SIZE = 1024 + 32
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 15.0  # sendMessage answers in well under a second; this is a hung server
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
_NOT_MODIFIED = "message is not modified"
# Transport timeouts before a request went out: no connection was had (httpx: connecting or
# waiting for the pool; aiohttp: both are its connect timeout).
_UNSENT_TIMEOUTS = (httpx.ConnectTimeout, httpx.PoolTimeout, aiohttp.ConnectionTimeoutError)

_App: TypeAlias = Application[Any, Any, Any, Any, Any, Any]
_Context: TypeAlias = ContextTypes.DEFAULT_TYPE


# ---------------------------------------------------------------------------- the bot


def make_bot(settings: Settings) -> Bot:
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
        read_timeout=READ_TIMEOUT,
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


def _topic_of(message: Message) -> int | None:
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


def _not_found(exc: tg_error.TelegramError) -> bool:
    """A 404 ``Not Found``: a method the Bot API server does not have. python-telegram-bot
    raises ``EndPointNotFound`` for it once the bot is initialised, and before that an
    ``InvalidToken`` chained to one whose text is the server's (a 401 says ``Unauthorized``)."""
    if isinstance(exc, tg_error.EndPointNotFound):
        return True
    cause = exc.__cause__
    return isinstance(cause, tg_error.InvalidToken) and "not found" in str(cause).lower()


def _is_gone(message: str) -> bool:
    lowered = message.lower()
    return any(marker in lowered for marker in _GONE_MARKERS)


def translate_error(exc: tg_error.TelegramError, *, token: str | None = None) -> DeliveryError:
    """A python-telegram-bot error as the ``bot.errors`` class the delivery engine acts on.

    Each carries a ``code`` the metrics count by (``blocked``, ``rate_limited``,
    ``timeout``...); the reason starts with the same label, then Telegram's own text with
    the token redacted.
    """
    text = redact(str(exc), token)
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
        # to Telegram stops as a whole and the messages stay queued (see bot/delivery.py).
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
        unsent = isinstance(exc.__cause__, _UNSENT_TIMEOUTS)
        return TransientError(f"timeout: {text}", ambiguous=not unsent, code="timeout")
    if isinstance(exc, tg_error.NetworkError):  # 5xx, connection refused or dropped
        return TransientError(f"network: {text}", code="network")
    if isinstance(exc, tg_error.EndPointNotFound | tg_error.Conflict):
        return PermanentError(f"telegram: {text}", code="telegram")
    return TransientError(f"telegram: {text}", code="telegram")  # e.g. an unreadable answer


# ---------------------------------------------------------------------------- outbound


class TelegramSender:
    """Sends rendered messages to Telegram chats (satisfies ``bot.delivery.Sender``).

    ``rich`` is ``TELEGRAM_RICH_MESSAGES`` (the deployment's default is ``auto``; a sender
    made without it sends HTML only)."""

    platform = Platform.TELEGRAM

    def __init__(
        self,
        bot: Bot,
        *,
        rate_per_second: float,
        paid_broadcast: bool = False,
        rich: RichMode = "off",
    ) -> None:
        self._bot = bot
        self._rate = rate_per_second
        self._paid = paid_broadcast
        # The platform's pace and chats' slots, shared with the replies to commands.
        self.pacing = Pacing(rate_per_second)
        # Rich digests (see :meth:`send`). What was learnt lives in this process only: after
        # a restart each refusing chat refuses once more, and then gets HTML again at once.
        self._rich = rich
        self._rich_for_none = rich == "off"  # every chat gets HTML
        self._rich_refused: set[str] = set()  # chats that get HTML ("auto")
        self._refusals_in_a_row: set[str] = set()
        # chat -> whether its latest digest went as a rich message (its covered parts are
        # then not sent); one entry per chat that had a digest with a rich form
        self._went_rich: dict[str, bool] = {}

    def rich_for(self, chat_id: str) -> bool:
        """Whether a digest to ``chat_id`` goes as a rich message, as far as is known now."""
        if self._rich_for_none:
            return False
        return self._rich == "on" or self.slot_key(chat_id) not in self._rich_refused

    @property
    def rate_per_second(self) -> float | None:
        return self._rate

    def interval(self, chat: ChatSettings) -> float:
        return GROUP_CHAT_INTERVAL if chat.kind == ChatKind.GROUP else PRIVATE_CHAT_INTERVAL

    async def send(self, chat_id: str, message: Outgoing, *, thread: str | None) -> str | None:
        """Send one message; return its message id. ``thread`` is Slack's: on Telegram a
        forum topic is part of the chat id (:func:`split_chat_id`).

        A digest's first message may carry its rich form (``message.rich``): when the chat
        may get rich messages (:meth:`rich_for`) that goes instead (``sendRichMessage``), and
        the digest's other messages (``rich_covered``) are then not sent (``None``). When
        the server refuses it -- 404, a server without the method, or 400 -- the HTML goes
        at once instead, and the rest of the digest as HTML after it; with ``auto`` the
        refusal is remembered, for the chat (400) or for every chat (404, or
        :data:`RICH_REFUSALS_FOR_ALL` chats refusing in a row).

        Raises:
            DeliveryError: a subclass saying what to do (see :func:`translate_error`); a
                closed or deleted topic is ``ChatGone`` for that topic alone.
        """
        chat_ref, topic = split_chat_id(chat_id)
        key = self.slot_key(chat_id)
        try:
            if message.rich_covered:
                # Covered by the digest's rich message if that went; when this process did
                # not send the digest's first message (restarted since), as it would now.
                went_rich = self._went_rich.get(key)
                if went_rich if went_rich is not None else self.rich_for(chat_id):
                    return None
            if message.rich is not None:
                self._went_rich[key] = False
                if self.rich_for(chat_id):
                    rich_id = await self._send_rich(chat_ref, message.rich, thread_id=topic)
                    if rich_id is not None:
                        self._went_rich[key] = True
                        return str(rich_id)
            message_id = await post_message(
                self._bot, chat_id=chat_ref, message=message, thread_id=topic, paid=self._paid
            )
        except tg_error.TelegramError as exc:
            raise translate_error(exc, token=self._bot.token) from None
        except RuntimeError as exc:
            if "not initialized" not in str(exc):
                raise
            # The connections were closed (shutting down): the message stays queued.
            raise TransientError(
                "closed: the Telegram connections are shut down", code="closed"
            ) from None
        return str(message_id)

    def slot_key(self, chat_id: str) -> str:
        """The key of the chat's per-chat limit: a forum topic counts as its group."""
        return str(split_chat_id(chat_id)[0])

    async def _send_rich(
        self, chat_ref: int | str, rich: str, *, thread_id: int | None
    ) -> int | None:
        """``sendRichMessage`` of ``rich`` (the JSON text of an ``InputRichMessage``); the
        message id, or ``None`` when the server refused the method or the message.

        python-telegram-bot 22.8 has no method for it: the call goes through its generic
        ``Bot.do_api_request``, with its request, errors and redaction.

        Raises:
            telegram.error.TelegramError: anything but a refusal of the rich message itself
                (a chat gone, a closed topic, a rate limit, the network...).
        """
        api_kwargs: dict[str, Any] = {"chat_id": chat_ref, "rich_message": rich}
        if thread_id is not None:
            api_kwargs["message_thread_id"] = thread_id
        if self._paid:
            api_kwargs["allow_paid_broadcast"] = True
        key = str(chat_ref)
        try:
            result = await self._bot.do_api_request("send_rich_message", api_kwargs=api_kwargs)
        except tg_error.BadRequest as exc:
            if translate_error(exc).code != "bad_request":
                raise  # the chat or its topic is gone: no message goes there
            self._refused(key, everywhere=False, reason=redact(str(exc), self._bot.token))
            return None
        except (tg_error.EndPointNotFound, tg_error.InvalidToken) as exc:
            if not _not_found(exc):
                raise  # 401: the token itself
            self._refused(key, everywhere=True, reason=redact(str(exc), self._bot.token))
            return None
        self._refusals_in_a_row.clear()
        if not isinstance(result, dict):
            raise tg_error.TelegramError(f"sendRichMessage answered {type(result).__name__}")
        return int(result["message_id"])

    def _refused(self, key: str, *, everywhere: bool, reason: str) -> None:
        """Remember a refused rich message (``auto``); log it once."""
        if self._rich != "auto":
            log.info("rich digest refused, sent as HTML: %s", reason)
            return
        self._refusals_in_a_row.add(key)
        if everywhere or len(self._refusals_in_a_row) >= RICH_REFUSALS_FOR_ALL:
            if not self._rich_for_none:
                log.warning("rich digests refused by the server, HTML from now on: %s", reason)
            self._rich_for_none = True
            return
        if key not in self._rich_refused:
            log.info("rich digests refused in a chat, HTML there from now on: %s", reason)
        self._rich_refused.add(key)


async def post_message(
    bot: Bot,
    *,
    chat_id: int | str,
    message: Outgoing,
    thread_id: int | None = None,
    paid: bool = False,
) -> int:
    """``sendMessage`` with the parameters :func:`send_outgoing` passes, posted through the
    bot's own request object; returns the message id.

    ``Bot.send_message`` makes a :class:`telegram.Message` of the answer, entities and all,
    and the sender and the replies to commands read only its id: for a digest that object
    cost about a third of the CPU of a whole delivery (``bench/fanout.py``). The request and
    its errors are python-telegram-bot's own (``BaseRequest.post``); a test compares the
    parameters on the wire with those of ``Bot.send_message``. ``paid`` sends
    ``allow_paid_broadcast`` (past 30 messages a second, charged in Stars).

    Raises:
        telegram.error.TelegramError: as ``Bot.send_message`` raises it.
    """
    # Every value goes as the text python-telegram-bot would make of it (a number's digits,
    # ``true``, the JSON of the keyboard and of the link preview options). Parsing the
    # keyboard into an InlineKeyboardMarkup only to turn it back into a dict cost a third of
    # the CPU of a delivery (``bench/fanout.py``); ``RequestParameter.from_input`` checked
    # each value against a dozen types, and the body encoded the numbers once more.
    parameters = {
        "chat_id": str(chat_id),
        "text": message.text,
        "parse_mode": None if message.plain else ParseMode.HTML.value,
        "link_preview_options": _NO_PREVIEW_JSON,
        "reply_markup": orjson.dumps(message.markup).decode() if message.markup else None,
        "message_thread_id": None if thread_id is None else str(thread_id),
        "allow_paid_broadcast": "true" if paid else None,
    }
    data = RequestData(
        [
            RequestParameter(name, value, None)
            for name, value in parameters.items()
            if value is not None
        ]
    )
    result = await bot.request.post(f"{bot.base_url}/sendMessage", data)
    if not isinstance(result, dict):
        raise tg_error.TelegramError(f"sendMessage answered {type(result).__name__}")
    return int(result["message_id"])


async def send_outgoing(
    bot: Bot, *, chat_id: int | str, message: Outgoing, thread_id: int | None = None
) -> Message:
    """``sendMessage`` of one :class:`Outgoing`: HTML unless plain, no link previews."""
    return await bot.send_message(
        chat_id,
        message.text,
        parse_mode=None if message.plain else ParseMode.HTML,
        link_preview_options=_NO_PREVIEW,
        reply_markup=_markup(message.markup),
        message_thread_id=thread_id,
    )


_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
_NO_PREVIEW_JSON = json.dumps(_NO_PREVIEW.to_dict())


def _markup(markup: dict[str, object] | None) -> InlineKeyboardMarkup | None:
    return InlineKeyboardMarkup.de_json(markup, None) if markup else None


# ---------------------------------------------------------------------------- inbound


class _PerChatProcessor(BaseUpdateProcessor):
    """Updates of different chats run concurrently; updates of one chat run in order.

    Two taps on a tag picker must not both read the filter before either writes it.
    """

    def __init__(self, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: dict[int, asyncio.Lock] = {}
        self._users: Counter[int] = Counter()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            await coroutine
            return
        lock = self._locks.setdefault(chat.id, asyncio.Lock())
        self._users[chat.id] += 1
        try:
            async with lock:
                await coroutine
        finally:
            self._users[chat.id] -= 1
            if self._users[chat.id] <= 0:
                del self._users[chat.id]
                self._locks.pop(chat.id, None)

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


class TelegramChannel:
    """Telegram updates -> the command core -> replies in the chat.

    Long polling when ``TELEGRAM_WEBHOOK_URL`` is unset; otherwise the webhook is registered
    with Telegram and the HTTP server hands each request to :meth:`process_webhook`.

    The :class:`telegram.Bot` is shared with :class:`TelegramSender`; :meth:`stop` closes its
    connections, so stop the channel after the delivery engine (a send after that stays
    queued as a transient failure).
    """

    def __init__(
        self, *, settings: Settings, core: CommandCore, bot: Bot, pacing: Pacing | None = None
    ) -> None:
        self._settings = settings
        # Replies share the sender's pacing (``TelegramSender.pacing``) when given it.
        self._replies = Replies(
            pacing or Pacing(settings.telegram_rate_per_second), platform=Platform.TELEGRAM.value
        )
        self._core = core
        self._bot = bot
        self._username = ""
        self._admin_cache: dict[tuple[int, int], tuple[float, bool]] = {}
        self._webhook_mode = settings.telegram_webhook_url is not None
        self._seen_updates: OrderedDict[int, None] = OrderedDict()
        self._paid = settings.telegram_paid_broadcast
        builder = (
            ApplicationBuilder()
            .bot(bot)
            .job_queue(None)
            .concurrent_updates(_PerChatProcessor(CONCURRENT_UPDATES))
        )
        if self._webhook_mode:
            builder = builder.updater(None)
        self.application: _App = builder.build()
        on_message = filters.UpdateType.MESSAGE
        self.application.add_handler(MessageHandler(on_message & filters.COMMAND, self._on_command))
        self.application.add_handler(
            MessageHandler(
                on_message & filters.TEXT & ~filters.COMMAND & filters.ChatType.PRIVATE,
                self._on_text,
            )
        )
        self.application.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self._on_migrate))
        self.application.add_handler(CallbackQueryHandler(self._on_callback))
        self.application.add_handler(
            ChatMemberHandler(self._on_my_chat_member, ChatMemberHandler.MY_CHAT_MEMBER)
        )
        self.application.add_error_handler(self._on_error)

    @property
    def username(self) -> str:
        """The bot's @username without the @, known after :meth:`start`."""
        return self._username

    # Lifecycle --------------------------------------------------------------------------

    async def start(self, *, poll: bool = True) -> None:
        """Connect (getMe), set the command menu, then poll or register the webhook.

        With ``poll`` false in polling mode, updates are not fetched until
        :meth:`start_polling` (only the leader of several replicas long-polls).

        Raises:
            ConfigError: Telegram rejected the token.
            DeliveryError: Telegram could not be reached (a ``TransientError``) or refused a
                call; the reason says which, never with the token.
        """
        try:
            await self.application.initialize()
        except tg_error.TelegramError as exc:
            await self._bot.shutdown()
            if isinstance(exc, tg_error.InvalidToken):
                raise ConfigError(
                    "TELEGRAM_BOT_TOKEN", "was rejected by Telegram; check it with @BotFather"
                ) from None
            raise translate_error(exc, token=self._token) from None
        self._username = self._bot.username
        await self._set_commands()
        try:
            await self.application.start()
            if self._webhook_mode:
                await self._bot.set_webhook(
                    url=self._settings.telegram_webhook_url or "",
                    secret_token=self._secret,
                    allowed_updates=list(ALLOWED_UPDATES),
                )
                log.info("telegram: webhook mode as @%s", self._username)
            elif poll:
                await self.start_polling()
        except tg_error.TelegramError as exc:
            await self.stop()
            raise translate_error(exc, token=self._token) from None

    @property
    def polling(self) -> bool:
        updater = self.application.updater
        return updater is not None and updater.running

    async def start_polling(self) -> None:
        """Fetch updates by long polling (no-op in webhook mode or when already polling)."""
        updater = self.application.updater
        if updater is None or updater.running:
            return
        await updater.start_polling(
            timeout=LONG_POLL_SECONDS,
            allowed_updates=list(ALLOWED_UPDATES),
            drop_pending_updates=False,
            error_callback=self._on_polling_error,
        )
        log.info("telegram: long polling as @%s", self._username)

    async def stop_polling(self) -> None:
        """Stop fetching updates; sending and webhooks go on."""
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()
            log.info("telegram: stopped long polling")

    async def stop(self) -> None:
        """Stop fetching updates, finish the ones being handled, close the connections."""
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()

    async def process_webhook(self, body: bytes, secret_header: str | None) -> int:
        """One webhook request: the HTTP status to answer. Never raises.

        401 when the ``X-Telegram-Bot-Api-Secret-Token`` header does not match the secret
        (nothing is processed; settings make the secret required in webhook mode); 400 when
        the body is not an update, whatever is wrong with it (not UTF-8, not JSON, nested too
        deeply to parse, not an object, no integer ``update_id``, fields of the wrong type);
        503 when the channel is not running (Telegram retries later); 200 once the update is
        queued for the handlers, or when its ``update_id`` was already queued by this process
        (Telegram sends an update again when it did not see an answer: it is acted on once).
        The update ids seen are kept in memory, the last :data:`SEEN_UPDATES_MAX` of them, per
        process: a restart or another replica does not know them.
        """
        secret = self._secret
        if secret is None or not hmac.compare_digest(
            (secret_header or "").encode(), secret.encode()
        ):
            return 401
        update = self._parse_update(body)
        if update is None:
            return 400
        if not self.application.running:
            return 503
        if update.update_id in self._seen_updates:
            log.info("telegram: update %d seen before; not acted on again", update.update_id)
            return 200
        self._seen_updates[update.update_id] = None
        while len(self._seen_updates) > SEEN_UPDATES_MAX:
            self._seen_updates.popitem(last=False)
        await self.application.update_queue.put(update)
        return 200

    def _parse_update(self, body: bytes) -> Update | None:
        """The update in a webhook body, or None (logged, one line, no traceback)."""
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or type(data.get("update_id")) is not int:
                raise ValueError("not an update object")
            return Update.de_json(data, self._bot)
        except RecursionError:
            reason = "nested too deeply"
        except Exception as exc:  # any malformed body is the sender's error, never a 500
            reason = type(exc).__name__
        log.warning("telegram: webhook body is not an update (%s); answered 400", reason)
        return None

    @property
    def _token(self) -> str | None:
        token = self._settings.telegram_bot_token
        return token.get_secret_value() if token is not None else None

    @property
    def _secret(self) -> str | None:
        secret = self._settings.telegram_webhook_secret
        return secret.get_secret_value() if secret is not None else None

    async def _set_commands(self) -> None:
        """The command menus: every command in private chats and for group administrators,
        the read-only ones (``Menu.GROUP`` in :mod:`bot.commands.registry`) for other group
        members; one menu per language of the catalogues, the source language's for users of
        any other."""
        for lang in LANGUAGES:
            language_code = None if lang == SOURCE else lang
            for scope, commands in menu_scopes(lang):
                try:
                    await self._bot.set_my_commands(
                        commands, scope=scope, language_code=language_code
                    )
                except tg_error.TelegramError as exc:
                    log.warning(
                        "telegram: could not set the command menu (%s, %s): %s",
                        lang,
                        scope.type,
                        redact(str(exc), self._token),
                    )
                    break  # the other scopes would fail alike

    def _on_polling_error(self, exc: tg_error.TelegramError) -> None:
        log.warning("telegram: polling failed, retrying: %s", redact(str(exc), self._token))

    # Handlers ---------------------------------------------------------------------------

    async def _on_command(self, update: Update, _context: _Context) -> None:
        message = update.message
        if message is None or message.text is None or not self._from_person(message):
            return
        if message.forward_origin is not None:
            return  # a forwarded command is someone else's words
        text = self._own_command(message)
        if text is None:
            return
        await self._run(message, lambda caller: self._core.handle(caller, text))

    async def _on_text(self, update: Update, _context: _Context) -> None:
        message = update.message
        if message is None or not self._from_person(message):
            return
        await self._run(message, lambda caller: self._core.hint(caller))

    async def _run(self, message: Message, command: Callable[[Caller], Awaitable[Reply]]) -> None:
        chat, user = message.chat, message.from_user
        topic = _topic_of(message)
        if user is None or user.is_bot:  # an anonymous administrator: the group itself

            async def group_itself() -> bool:
                return True

            caller = _caller(
                chat, topic=topic, user_id=chat.id, language_code=None, can_manage=group_itself
            )
        else:
            user_id = user.id

            async def can_manage() -> bool:
                return await self._can_manage(chat.id, user_id)

            caller = _caller(
                chat,
                topic=topic,
                user_id=user_id,
                language_code=user.language_code,
                can_manage=can_manage,
            )
        with self._replies.pacing.chats.expect(str(chat.id)):  # the reply goes first
            try:
                reply = await command(caller)
            except Exception:
                self._log_failure("command", chat.id)
                lang = self._fallback_lang(caller)
                reply = Reply(lang, t(lang, "cmd.error"))
            await self._reply(chat.id, reply, thread_id=topic)

    async def _on_callback(self, update: Update, _context: _Context) -> None:
        """A button press: answered first, then acted on.

        Telegram shows a spinner until the query is answered and refuses an answer that
        comes too late ("query is too old"), so the answer goes out before any database
        work or edit. A press the user may not make is refused in that answer, as an alert,
        and the message stays as it is: whether they may is asked of Telegram (group
        administrators) or of the settings (broadcast admins), never of the database.
        """
        query = update.callback_query
        if query is None:
            return
        message = query.message
        if query.from_user.is_bot or query.data is None or not isinstance(message, Message):
            await self._answer(query)
            return
        data, chat, user = query.data, message.chat, query.from_user

        async def can_manage() -> bool:
            return await self._can_manage(chat.id, user.id)

        caller = _caller(
            chat,
            topic=_topic_of(message),
            user_id=user.id,
            language_code=user.language_code,
            can_manage=can_manage,
        )
        lang = self._fallback_lang(caller)
        if data.startswith(votes.VOTE):
            await self._on_vote(query, caller, data, chat_id=chat.id, lang=lang)
            return
        if data.startswith(toggle.TOGGLE):
            await self._on_toggle(query, message, caller, data, lang=lang)
            return
        try:
            refusal = await self._refusal(caller, data, lang=lang)
        except Exception:
            self._log_failure("button", chat.id)
            await self._answer(query, alert=t(lang, "cmd.error"))
            return
        await self._answer(query, alert=refusal)
        try:
            reply = await self._core.handle_action(caller, data)
        except Exception:
            self._log_failure("button", chat.id)
            await self._reply(
                chat.id, Reply(lang, t(lang, "cmd.error")), thread_id=_topic_of(message)
            )
            return
        if reply is None or refusal is not None or isinstance(reply, Toast):
            return  # refused: the core logged it; the message stays exactly as it was
        await self._edit(message, reply)

    async def _on_vote(
        self, query: CallbackQuery, caller: Caller, data: str, *, chat_id: int, lang: str
    ) -> None:
        """A 👍 or 👎: the answer is the toast saying what the press did ("Noted: more like
        this", or the vote taken back), when the vote is stored within
        ``VOTE_TOAST_WAIT_SECONDS``; otherwise a plain answer goes first and the vote is
        stored after it, so that the press never ends in "query is too old"."""
        vote = asyncio.ensure_future(self._core.handle_action(caller, data))
        done, _ = await asyncio.wait({vote}, timeout=VOTE_TOAST_WAIT_SECONDS)
        if not done:
            await self._answer(query)
        try:
            reply = await vote
        except Exception:
            self._log_failure("vote", chat_id)
            if done:
                await self._answer(query, alert=t(lang, "cmd.error"))
            return
        if not done:
            return
        if isinstance(reply, Toast):
            await self._answer(query, toast=reply.text)
        elif reply is not None:  # refused (a malformed or forged vote): said as an alert
            await self._answer(query, alert=reply.text)
        else:
            await self._answer(query)

    async def _on_toggle(
        self, query: CallbackQuery, message: Message, caller: Caller, data: str, *, lang: str
    ) -> None:
        """The language toggle: the digest in the other language, in place of the message
        (https://core.telegram.org/bots/api#editmessagetext, the same keyboard with the
        toggle back). A digest of several messages in either language cannot be shown in
        one: then its messages in the other language follow as new messages."""
        await self._answer(query)
        try:
            answer = await self._core.toggle_language(caller, data)
        except Exception:
            self._log_failure("toggle", message.chat.id)
            await self._reply(
                message.chat.id, Reply(lang, t(lang, "cmd.error")), thread_id=_topic_of(message)
            )
            return
        if isinstance(answer, Reply):
            await self._reply(message.chat.id, answer, thread_id=_topic_of(message))
            return
        back = toggle.button(toggle.other(answer.digest.lang), answer.row_id)
        parts = toggle.with_toggle(
            Platform.TELEGRAM, render.digest_messages(Platform.TELEGRAM, answer.digest), back
        )
        rich = message.text is None and parts[0].rich is not None  # a rich message: all in one
        if rich and await self._edit_rich(message, parts[0]):
            return
        if len(parts) == 1 and message.text is not None:
            await self._edit_parts(message, parts)
            return
        for part in parts:
            await self._send_reply(
                message.chat.id,
                replace(part, rich=None, rich_covered=False),
                thread_id=_topic_of(message),
            )

    async def _edit_rich(self, message: Message, part: Outgoing) -> bool:
        """A rich message edited in place: ``editMessageText`` takes ``rich_message``
        instead of ``text`` (https://core.telegram.org/bots/api#editmessagetext, Bot API
        10.1: "text ... required if rich_message isn't specified"); the toggle is a buttons
        block inside it. python-telegram-bot 22.8 knows the method but not the field: the
        text is None (it drops None parameters) and the field goes in ``api_kwargs``.

        False when Telegram refused the edit (the chat no longer takes rich messages): the
        caller then sends the digest as new HTML messages."""
        try:
            await self._bot.edit_message_text(
                None,  # type: ignore[arg-type]
                chat_id=message.chat.id,
                message_id=message.message_id,
                api_kwargs={"rich_message": part.rich},
            )
        except tg_error.BadRequest as exc:
            if _NOT_MODIFIED in str(exc).lower():
                return True
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
            return False
        except tg_error.TelegramError as exc:
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        return True

    async def _edit_parts(self, message: Message, parts: list[Outgoing]) -> None:
        first = parts[0]
        try:
            await self._bot.edit_message_text(
                first.text,
                chat_id=message.chat.id,
                message_id=message.message_id,
                parse_mode=None if first.plain else ParseMode.HTML,
                link_preview_options=LinkPreviewOptions(is_disabled=True),
                reply_markup=_markup(first.markup),
            )
        except tg_error.BadRequest as exc:
            if _NOT_MODIFIED not in str(exc).lower():
                log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        except tg_error.TelegramError as exc:
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))

    async def _refusal(self, caller: Caller, data: str, *, lang: str) -> str | None:
        """The alert refusing this press, or None when the user may press it."""
        if data.startswith((BROADCAST_SEND, BROADCAST_CANCEL)):
            admins = {str(admin) for admin in self._settings.telegram_admin_ids}
            return None if caller.user_id in admins else t(lang, "cmd.admins_only")
        if data.startswith((TOGGLE, FEEDBACK_RESET)) and caller.can_manage is not None:
            return None if await caller.can_manage() else t(lang, "cmd.group_admins_only")
        return None

    async def _answer(
        self, query: CallbackQuery, *, alert: str | None = None, toast: str | None = None
    ) -> None:
        try:
            if alert:
                await query.answer(text=alert[:MAX_ALERT_CHARS], show_alert=True)
            elif toast:
                await query.answer(text=toast[:MAX_ALERT_CHARS])
            else:
                await query.answer()
        except tg_error.TelegramError as exc:
            log.info("telegram: could not answer a button: %s", redact(str(exc), self._token))

    async def _on_migrate(self, update: Update, _context: _Context) -> None:
        """A group became a supergroup: its chat moves to the new id at once.

        Telegram posts two service messages, ``migrate_to_chat_id`` in the old group and
        ``migrate_from_chat_id`` in the new supergroup (https://core.telegram.org/bots/api#message);
        either one moves the chat, the second finds nothing left to move.
        """
        message = update.message
        if message is None:
            return
        if message.migrate_to_chat_id is not None:
            old, new = message.chat.id, message.migrate_to_chat_id
        elif message.migrate_from_chat_id is not None:
            old, new = message.migrate_from_chat_id, message.chat.id
        else:
            return
        if await self._core.chat_moved(
            platform=Platform.TELEGRAM, old_chat_id=str(old), new_chat_id=str(new)
        ):
            log.info("telegram: group became supergroup %s; chat moved", new, extra=_ctx(old))

    async def _on_my_chat_member(self, update: Update, _context: _Context) -> None:
        change = update.my_chat_member
        if change is None:
            return
        status = change.new_chat_member.status
        if status not in (ChatMember.BANNED, ChatMember.LEFT):
            return  # (re-)added: a later subscribe or resume makes the chat active again
        chat_id = str(change.chat.id)
        if await self._core.removed_from_chat(platform=Platform.TELEGRAM, chat_id=chat_id):
            log.info("telegram: bot removed from chat; chat is now inactive", extra=_ctx(chat_id))

    async def _on_error(self, update: object, context: _Context) -> None:
        exc = context.error
        log.error(
            "telegram: unhandled error: %s: %s",
            type(exc).__name__,
            redact(str(exc), self._token),
            extra={"platform": "telegram"},
        )

    # Helpers ----------------------------------------------------------------------------

    def _from_person(self, message: Message) -> bool:
        user = message.from_user
        if user is None:
            return False
        if not user.is_bot:
            return True
        # An anonymous group administrator writes as the group itself.
        sender = message.sender_chat
        return sender is not None and sender.id == message.chat.id

    def _own_command(self, message: Message) -> str | None:
        """The command text without ``@ThisBot``; None when addressed to another bot."""
        text = message.text or ""
        entity = (message.entities or (None,))[0]
        if entity is None or entity.type != MessageEntity.BOT_COMMAND or entity.offset != 0:
            return None
        head = message.parse_entity(entity)
        name, at, target = head.partition("@")
        if at and target.lower() != self._username.lower():
            return None
        return name + text[len(head) :]

    async def _can_manage(self, chat_id: int, user_id: int) -> bool:
        key = (chat_id, user_id)
        now = time.monotonic()
        cached = self._admin_cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        member = await self._bot.get_chat_member(chat_id, user_id)
        allowed = member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR)
        if len(self._admin_cache) >= ADMIN_CACHE_MAX:
            self._admin_cache = {k: v for k, v in self._admin_cache.items() if v[0] > now}
            if len(self._admin_cache) >= ADMIN_CACHE_MAX:
                self._admin_cache.clear()
        self._admin_cache[key] = (now + ADMIN_CACHE_SECONDS, allowed)
        return allowed

    def _log_failure(self, what: str, chat_id: int) -> None:
        """Log the exception being handled, its traceback redacted here, whatever the
        logging set-up (a library message may carry a request URL)."""
        exc = sys.exception()
        trace = "".join(traceback.format_exception(exc)) if exc is not None else ""
        log.error(
            "telegram: %s failed: %s",
            what,
            redact(f"{type(exc).__name__}: {exc}", self._token),
            extra={**_ctx(chat_id), "error": redact(trace, self._token)},
        )

    def _fallback_lang(self, caller: Caller) -> str:
        return negotiate(caller.language_code, default=self._settings.default_language)

    async def _reply(self, chat_id: int, reply: Reply, *, thread_id: int | None) -> None:
        for part in render.reply_messages(Platform.TELEGRAM, reply):
            await self._send_reply(chat_id, part, thread_id=thread_id)
        if reply.chart is not None:
            await self._send_chart(chat_id, reply.chart, thread_id=thread_id)

    async def _send_chart(self, chat_id: int, chart: Chart, *, thread_id: int | None) -> None:
        """The chart of a reply, after its text: a photo (``sendPhoto``, uploaded) captioned
        with the chart's alt text, in plain text. The text went first and says it all; a
        chart that cannot be drawn or sent is logged, once, and nothing else happens."""
        png = await charts.picture(chart)
        if png is None:
            return

        async def post() -> int:
            try:
                message = await self._bot.send_photo(
                    chat_id,
                    photo=png,
                    filename=CHART_FILENAME,
                    caption=chart.alt[:MAX_CAPTION_CHARS],
                    message_thread_id=thread_id,
                )
            except tg_error.TelegramError as exc:
                raise translate_error(exc, token=self._token) from None
            return message.message_id

        interval = PRIVATE_CHAT_INTERVAL if chat_id > 0 else GROUP_CHAT_INTERVAL
        await self._replies.send(post, chat=str(chat_id), interval=interval)

    async def _send_reply(self, chat_id: int, part: Outgoing, *, thread_id: int | None) -> None:
        """Send one part of a reply through the platform's pacing (see ``bot.pacing``)."""

        async def post() -> int:
            try:
                return await post_message(
                    self._bot, chat_id=chat_id, message=part, thread_id=thread_id, paid=self._paid
                )
            except tg_error.TelegramError as exc:
                raise translate_error(exc, token=self._token) from None

        # A user's private chat has the user's (positive) id; groups have negative ids.
        interval = PRIVATE_CHAT_INTERVAL if chat_id > 0 else GROUP_CHAT_INTERVAL
        await self._replies.send(post, chat=str(chat_id), interval=interval)

    async def _edit(self, message: Message, reply: Reply) -> None:
        """Show ``reply`` in place of the message; parts beyond the first follow it."""
        chat_id, message_id = message.chat.id, message.message_id
        parts = render.reply_messages(Platform.TELEGRAM, reply)
        if not parts:
            return
        first, rest = parts[0], parts[1:]
        markup = first.markup if not rest else None
        try:
            await self._bot.edit_message_text(
                first.text,
                chat_id=chat_id,
                message_id=message_id,
                parse_mode=None if first.plain else ParseMode.HTML,
                link_preview_options=LinkPreviewOptions(is_disabled=True),
                reply_markup=_markup(markup),
            )
        except tg_error.BadRequest as exc:
            if _NOT_MODIFIED not in str(exc).lower():
                log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        except tg_error.TelegramError as exc:
            log.warning("telegram: could not edit a message: %s", redact(str(exc), self._token))
        for part in rest:
            await self._send_reply(chat_id, part, thread_id=_topic_of(message))


def _caller(
    chat: Chat,
    *,
    topic: int | None,
    user_id: int,
    language_code: str | None,
    can_manage: Callable[[], Awaitable[bool]],
) -> Caller:
    group = chat.type != Chat.PRIVATE  # group, supergroup or channel
    return Caller(
        platform=Platform.TELEGRAM,
        chat_id=topic_chat_id(chat.id, topic),
        user_id=str(user_id),
        chat_kind=ChatKind.GROUP if group else ChatKind.PRIVATE,
        chat_title=chat.title if group else None,
        language_code=language_code,
        can_manage=can_manage if group else None,
    )


def _ctx(chat_id: int | str) -> dict[str, object]:
    return {"chat": f"telegram:{chat_id}", "platform": "telegram"}


def menu_scopes(lang: str) -> list[tuple[BotCommandScope, list[BotCommand]]]:
    """Each menu scope with its commands in ``lang`` (Bot API setMyCommands: the narrowest
    scope that applies to a chat and user wins)."""
    everything = menu_commands(lang)
    reading = menu_commands(lang, group_member=True)
    return [
        (BotCommandScopeAllPrivateChats(), everything),
        (BotCommandScopeAllGroupChats(), reading),
        (BotCommandScopeAllChatAdministrators(), everything),
    ]


def menu_commands(lang: str, *, group_member: bool = False) -> list[BotCommand]:
    """The command menu in ``lang``, from the registry of commands help also lists
    (:mod:`bot.commands.registry`): each command's description is its help line's."""
    commands = []
    for command in registry.menu(group_member=group_member):
        if not COMMAND_NAME_RE.match(command.name):
            continue
        _usage, _, description = t(lang, command.line_key, p="/").partition(" — ")
        commands.append(BotCommand(command.name, description[:MAX_COMMAND_DESCRIPTION]))
    return commands


__all__ = [
    "ALLOWED_UPDATES",
    "GROUP_CHAT_INTERVAL",
    "PRIVATE_CHAT_INTERVAL",
    "TelegramChannel",
    "TelegramSender",
    "close_bot",
    "make_bot",
    "menu_commands",
    "menu_scopes",
    "post_message",
    "redact",
    "send_outgoing",
    "split_chat_id",
    "topic_chat_id",
    "translate_error",
]
