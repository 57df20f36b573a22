"""A local HTTP server that speaks the Telegram Bot API, for tests.

python-telegram-bot runs unchanged against it: pass ``tg.base_url`` as the bot's ``base_url``.
Requests arrive as ``POST {base_url}{token}/{method}`` with a form, multipart or JSON body (PTB
sends a form whose non-string values are JSON-encoded); every answer is the Bot API envelope,
``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code": ..., "description": ...,
"parameters": {...}}``, with the HTTP status equal to ``error_code``.

Failures are part of the fake's input, set by the test before or while the bot runs:

* ``blocked_chats``, ``missing_chats``, ``migrated_chats`` -- permanent per-chat answers;
* forum topics (``create_topic``, ``close_topic``, ``delete_topic``) -- sends to a closed or
  deleted topic are refused as Telegram refuses them;
* ``fail_next(method, status, ...)`` -- the next calls answer 429/500/502/...;
* ``drop_next(method)`` -- the next calls lose their connection without an answer;
* ``latency`` -- seconds added before every answer but ``getUpdates``;
* ``enforce_limits`` -- the Bot API flood limits on send methods: one message a second in any
  chat (``chat_interval``), 20 a minute in a group, ``global_rate`` a second in all (sends
  with ``allow_paid_broadcast``: ``paid_rate``, 1,000 unless set); a send that breaks one is
  answered 429 with ``retry_after`` and counted in ``limit_violations``.

What the bot sent is in ``sent`` (every call but ``getUpdates``) and ``messages_to(chat_id)``;
the counters (requests, answers by status, 429s, limit violations) in ``stats()``, also served
as JSON at ``GET /_stats`` for a fake running in another process;
``await wait_for(...)`` blocks until the expected calls arrive. Updates for the bot are queued
with ``inject_update`` or the builders ``message``, ``callback``, ``my_chat_member`` and
``migrate_group``, and served by ``getUpdates`` with real offset and long-polling semantics.

``sendRichMessage`` (Bot API 10.1; explicit ``blocks`` since 10.2, button rows since 10.3)
checks its ``rich_message`` as the Bot API's type pages describe it (:func:`check_rich_message`,
also for tests to call on a payload) and the rich message limits. ``bot_api_version`` makes
the fake an older or self-hosted server: below 10.1 it answers ``sendRichMessage`` with
``404 Not Found`` as for any method it does not know; 10.1 refuses ``blocks``, 10.2 refuses
button rows, both with 400. ``rich_refused_chats`` answer 400 to a rich message alone.

Every call is checked against the Bot API's machine-readable description
(:mod:`tests.fakes.telegram_spec`, ``tests/data/telegram_bot_api/``): a method, parameter or
field the Bot API does not have, a required one missing, or a value of another type. Telegram
answers a wrong type with 400, and so does the fake; it ignores a parameter it does not know
(so a misspelt option is silently lost), and so does the fake, which keeps it in
``spec_violations``: leaving ``async with`` with any fails the test (``check_spec = False``
for a test that sends malformed calls on purpose).

HTML ``parse_mode`` is parsed the way Telegram does it (the supported tags only, balanced, the
four named entities): the message comes back as plain text with entities, and malformed markup
is refused with ``400 Bad Request: can't parse entities: ...``. Markdown modes are stored
unparsed.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import functools
import gc
import itertools
import json
import logging
import math
import re
import socket
import struct
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, ClassVar

from aiohttp import web, web_protocol

from tests.fakes import telegram_spec
from tests.fakes.base import Dropped, LocalApiServer

DEFAULT_TOKEN = "123456:TEST-token"
DEFAULT_BOT_USERNAME = "TrendBot"
DEFAULT_USER_ID = 1001  # the user who writes in groups when a test names nobody

MAX_MESSAGE_CHARS = 4096  # sendMessage text, after entity parsing
# sendPhoto (https://core.telegram.org/bots/api#sendphoto): "The photo must be at most 10 MB
# in size. The photo's width and height must not exceed 10000 in total. Width and height
# ratio must be at most 20." The caption: "0-1024 characters after entities parsing".
MAX_PHOTO_BYTES = 10 * 1024 * 1024
MAX_PHOTO_SIDES = 10000
MAX_PHOTO_RATIO = 20
MAX_CAPTION_CHARS = 1024
MAX_CALLBACK_DATA_BYTES = 64  # InlineKeyboardButton.callback_data
MAX_UPDATES_LIMIT = 100  # getUpdates limit
CHAT_INTERVAL_SECONDS = 1.0  # Bot API FAQ: about one message per second in one chat
GROUP_WINDOW_SECONDS = 60.0  # Bot API FAQ: at most 20 messages per minute in one group
GROUP_MESSAGES_PER_WINDOW = 20
DEFAULT_GLOBAL_RATE = 30  # Bot API FAQ: about 30 messages per second in all
# sendMessage allow_paid_broadcast: "up to 1000 messages per second, ignoring broadcasting
# limits for a fee of 0.1 Telegram Stars per message" (https://core.telegram.org/bots/api#sendmessage).
PAID_BROADCAST_RATE = 1000
DEFAULT_LONG_POLL_CAP = 1.0  # getUpdates never holds a request longer, to keep tests fast
# The flood limits count exactly: the FAQ names no allowance for jitter ("When sending
# messages inside a particular chat, avoid sending more than one message per second ...
# the API will not allow more than 30 messages per second or so ... not be able to send more
# than 20 messages per minute to the same group", https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this),
# and a bot that keeps hitting 429 is made to wait longer. A test that needs slack sets
# ``limit_tolerance`` and says why.
DEFAULT_LIMIT_TOLERANCE = 0.0
# A send arrives when its request reaches the server: the fake reads that moment from the
# kernel (the receive time of the request's last bytes, SO_TIMESTAMPNS), not from when its
# handler comes to run. On the shared 2-core machine the handler ran up to 1.4 s after the
# bot wrote the request (p99 370 ms, the fake in the bot's process; 230 ms in a process of
# its own): a queue of the fake's own, which Telegram's servers do not count against a bot.
# The FAQ's limits are on what "the API will allow" a bot to send (page cited above):
# the requests as they reach it.
# Against handler times, 500 replies paced at most 30 in any second by their write times drew
# 1-2 429s in two runs of three (tests/integration/test_reply_pacing.py).
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux
_STAMP_SPACE = socket.CMSG_SPACE(16)  # a struct timespec
_STAMPED_PORTS: set[int] = set()  # the fakes' listening ports

# Update types Telegram leaves out unless allowed_updates names them.
_NOT_DELIVERED_BY_DEFAULT = frozenset({"chat_member", "message_reaction", "message_reaction_count"})
_SEND_METHODS = frozenset(
    {
        "sendMessage", "sendRichMessage", "sendPhoto", "sendDocument", "sendAudio", "sendVideo",
        "sendAnimation", "sendVoice", "sendSticker", "sendMediaGroup", "sendLocation", "sendPoll",
        "copyMessage", "forwardMessage",
    }
)  # fmt: skip
# Parameters whose form value is JSON (PTB encodes every non-string value with json.dumps).
_JSON_PARAMS = frozenset(
    {
        "chat_id", "message_id", "user_id", "offset", "limit", "timeout", "allowed_updates",
        "reply_markup", "link_preview_options", "disable_web_page_preview", "entities",
        "disable_notification", "protect_content", "reply_parameters", "message_thread_id",
        "reply_to_message_id", "allow_sending_without_reply", "commands", "scope", "show_alert",
        "cache_time", "drop_pending_updates", "max_connections", "only_if_banned",
        "allow_paid_broadcast", "message_effect_id", "caption_entities", "rich_message",
    }
)  # fmt: skip
_ADMIN_RIGHTS = (
    "can_manage_chat", "can_delete_messages", "can_manage_video_chats", "can_restrict_members",
    "can_change_info", "can_invite_users", "can_post_stories", "can_edit_stories",
    "can_delete_stories", "can_pin_messages",
)  # fmt: skip
# The newest Bot API the fake speaks (10.3, August 24, 2026,
# https://core.telegram.org/bots/api-changelog#august-24-2026).
BOT_API_VERSION = (10, 3)
RICH_MESSAGES_SINCE = (10, 1)  # sendRichMessage (changelog, June 11, 2026)
RICH_BLOCKS_SINCE = (10, 2)  # InputRichMessage.blocks (changelog, July 14, 2026)
RICH_BUTTONS_SINCE = (10, 3)  # InputRichBlockButtons, expandable quotations (August 24, 2026)
# Rich message limits (https://core.telegram.org/bots/api#rich-message-limits): up to 32768
# characters of text, 500 blocks counting nested ones, 16 levels of nested formatting and
# blocks. Characters are counted as Telegram does, in Unicode code points.
MAX_RICH_TEXT_CHARS = 32768
MAX_RICH_BLOCKS = 500
MAX_RICH_DEPTH = 16
MAX_RICH_BUTTONS = 8  # InputRichBlockButtons.buttons: "List of 1-8 buttons to send"
_COMMAND_RE = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?")
_BOT_COMMAND_NAME_RE = re.compile(r"^[a-z0-9_]{1,32}$")

_log = logging.getLogger(__name__)


def densest_window(stamps: list[float], *, window: float = 1.0) -> int:
    """The most of ``stamps`` in any half-open window of ``window`` seconds."""
    ordered = sorted(stamps)
    most, start = 0, 0
    for end, at in enumerate(ordered):
        while at - ordered[start] >= window:
            start += 1
        most = max(most, end - start + 1)
    return most


class _ApiError(Exception):
    """An error answer of the Bot API."""

    def __init__(
        self, status: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


@dataclass(slots=True)
class TelegramCall:
    """One request the bot made, as the fake answered it.

    ``status`` is the HTTP status answered (0 when the connection was dropped); ``response`` is
    the JSON body sent back (``None`` when dropped).
    """

    method: str
    params: dict[str, Any]
    at: float  # time.monotonic() when the request arrived
    chat_id: int | str | None
    status: int = 0
    response: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200

    @property
    def result(self) -> Any:
        return self.response.get("result") if self.response else None

    @property
    def description(self) -> str | None:
        return self.response.get("description") if self.response else None


@dataclass(frozen=True, slots=True)
class LimitViolation:
    """A send refused with 429 because it broke a flood limit (``rule``: chat, group, global)."""

    at: float
    method: str
    chat_id: int | str | None
    rule: str
    retry_after: int


@dataclass(slots=True)
class _Failure:
    status: int
    description: str | None
    retry_after: int | None
    target: int | str | None  # the chat id; None: any chat
    remaining: int


@dataclass(slots=True)
class _Limits:
    """The sliding windows behind ``enforce_limits``; each send is O(1) amortised."""

    last_in_chat: dict[int | str, float] = field(default_factory=dict)
    group_sends: dict[int | str, deque[float]] = field(default_factory=dict)
    # Sorted by arrival: two requests read in one turn of the loop may be handled out of
    # the order they arrived in.
    all_sends: list[float] = field(default_factory=list)


class _StampedSocket:
    """A connection's socket, read with the kernel's receive time of its data (the rest is
    the socket's own): ``received`` is when the last bytes read arrived, on
    ``time.monotonic()``'s clock."""

    __slots__ = ("_sock", "received")

    def __init__(self, sock: socket.socket) -> None:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        self._sock = sock
        self.received: float | None = None

    def recv(self, size: int) -> bytes:
        data, ancillary, _flags, _address = self._sock.recvmsg(size, _STAMP_SPACE)
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(raw) >= 16:
                seconds, nanos = struct.unpack("qq", raw[:16])
                self.received = seconds + nanos / 1e9 - _realtime_offset()
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def _realtime_offset() -> float:
    """The kernel's receive time (``CLOCK_REALTIME``) less ``time.monotonic()``, now: the
    wall clock read between two readings of the monotonic one, the closest pair of three.
    Read once, between two calls, a process that lost its core there would move an arrival
    later by as long as it waited (this fake shares the machine with the bot)."""
    gap, offset = math.inf, 0.0
    for _ in range(3):
        before = time.monotonic()
        wall = time.time()
        after = time.monotonic()
        if after - before < gap:
            gap, offset = after - before, wall - (before + after) / 2
        if gap < 1e-4:
            break
    return offset


_connection_made = web_protocol.RequestHandler.connection_made


def _stamped_connection_made(self: web_protocol.RequestHandler, transport: Any) -> None:
    """A connection to one of the fakes is read through a :class:`_StampedSocket` (asyncio's
    socket transport reads its ``_sock`` with ``recv``); other servers are left alone."""
    raw = getattr(transport, "_sock", None)
    if isinstance(raw, socket.socket) and raw.getsockname()[1] in _STAMPED_PORTS:
        transport._sock = _StampedSocket(raw)
    _connection_made(self, transport)


web_protocol.RequestHandler.connection_made = _stamped_connection_made  # type: ignore[method-assign]


def _arrived(request: web.Request) -> float:
    """When the request reached the fake: its last bytes' receive time, else now."""
    received = getattr(getattr(request.transport, "_sock", None), "received", None)
    return received if isinstance(received, float) else time.monotonic()


class FakeTelegram(LocalApiServer[TelegramCall]):
    """A Telegram Bot API server on 127.0.0.1 with an ephemeral port.

    Use as ``async with FakeTelegram(token="123:ABC") as tg:`` and give python-telegram-bot
    ``base_url=tg.base_url`` and ``base_file_url=tg.base_file_url``. All state is plain
    attributes the test may read and set at any time.

    Args:
        token: the only token accepted; others get 401 Unauthorized (404 when malformed).
        bot_username: what getMe answers.
        long_poll_cap: the longest a getUpdates request is held, whatever its ``timeout``.
        log_requests: log every request at INFO on this module's logger (off for benchmarks).
    """

    def __init__(
        self,
        *,
        token: str = DEFAULT_TOKEN,
        bot_username: str = DEFAULT_BOT_USERNAME,
        long_poll_cap: float = DEFAULT_LONG_POLL_CAP,
        log_requests: bool = False,
    ) -> None:
        super().__init__()
        self.token = token
        bot_id = token.split(":", 1)[0]
        self.bot_user: dict[str, Any] = {
            "id": int(bot_id) if bot_id.isdigit() else 123456,
            "is_bot": True,
            "first_name": bot_username,
            "username": bot_username,
        }
        self.long_poll_cap = long_poll_cap
        self.log_requests = log_requests

        # What the bot did (and ``sent``: every call but getUpdates).
        self.request_count: Counter[str] = Counter()
        self.limit_violations: list[LimitViolation] = []
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.callback_answers: dict[str, dict[str, Any]] = {}
        self.webhook: dict[str, Any] | None = None
        self.allowed_updates: list[str] | None = None

        # Failures and limits, set by the test.
        self.blocked_chats: set[int | str] = set()
        self.missing_chats: set[int | str] = set()
        self.migrated_chats: dict[int | str, int] = {}
        # Forum supergroups: chat id -> message_thread_id -> {"name", "is_closed"}; a deleted
        # topic is no longer in it (https://core.telegram.org/bots/api#forumtopic).
        self.forum_topics: dict[int | str, dict[int, dict[str, Any]]] = {}
        self.paid_broadcasts = 0  # sends that carried allow_paid_broadcast
        self.fail_set_my_commands = False
        self.latency = 0.0
        self.enforce_limits = False
        self.global_rate = DEFAULT_GLOBAL_RATE
        self.paid_rate = PAID_BROADCAST_RATE  # the cap of sends with allow_paid_broadcast
        self.chat_interval = CHAT_INTERVAL_SECONDS
        self.limit_tolerance = DEFAULT_LIMIT_TOLERANCE
        # The Bot API version the fake answers as (an older or self-hosted server), and the
        # chats where a rich message is refused (400) while sendMessage still works.
        self.bot_api_version = BOT_API_VERSION
        self.rich_refused_chats: set[int | str] = set()
        # Photos sent: the chat, the uploaded bytes and the Message answered.
        self.photos: list[dict[str, Any]] = []
        # Every call is checked against the Bot API's description (tests/fakes/telegram_spec.py):
        # what it does not allow is kept here, and leaving ``async with`` with any fails the
        # test. A test that sends the fake malformed calls on purpose turns it off.
        self.check_spec = True
        self.spec_violations: list[telegram_spec.Problem] = []

        # The world the bot talks to.
        self.chats: dict[int | str, dict[str, Any]] = {}
        self.users: dict[int, dict[str, Any]] = {}
        self.chat_admins: dict[int | str, set[int]] = {}
        self.chat_creators: dict[int | str, int] = {}

        self._limits = _Limits()
        self._paid_sends: list[float] = []
        self._messages: dict[tuple[int | str, int], dict[str, Any]] = {}
        self._by_chat: dict[int | str, list[dict[str, Any]]] = {}
        self._next_message_id: dict[int | str, int] = {}
        self._delivered = 0
        self._pending: deque[dict[str, Any]] = deque()
        self._next_update_id = 100_000_001
        self._callback_ids = itertools.count(4_382_000_000_000_000_001)
        self._issued_callbacks: set[str] = set()
        self._poll_generation = 0
        self._held_polls = 0
        self._updates_arrived = asyncio.Event()
        self._closing = False
        self._handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "getMe": self._get_me,
            "getUpdates": self._get_updates,
            "sendMessage": self._send_message,
            "sendRichMessage": self._send_rich_message,
            "sendPhoto": self._send_photo,
            "editMessageText": self._edit_message_text,
            "editMessageReplyMarkup": self._edit_message_reply_markup,
            "answerCallbackQuery": self._answer_callback_query,
            "setMyCommands": self._set_my_commands,
            "deleteMyCommands": self._delete_my_commands,
            "getMyCommands": self._get_my_commands,
            "getChatMember": self._get_chat_member,
            "getChat": self._get_chat,
            "setWebhook": self._set_webhook,
            "deleteWebhook": self._delete_webhook,
            "getWebhookInfo": self._get_webhook_info,
        }
        self._canonical = {name.lower(): name for name in self._handlers}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Listen on 127.0.0.1 on a free port.

        What the process holds so far (a whole test session's leftovers) is frozen out of
        the garbage collector's full collections: a pause of one here would hold requests
        back and count them together after it, as a burst over the flood limits that the
        bot never sent.
        """
        gc.freeze()
        await super().start()
        _STAMPED_PORTS.add(self.port)

    def _routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._handle_file)
        app.router.add_get("/_stats", self._handle_stats)
        app.router.add_get("/_arrivals", self._handle_arrivals)

    async def __aexit__(self, *exc_info: object) -> None:
        await super().__aexit__(*exc_info)
        if self.check_spec and self.spec_violations and exc_info[0] is None:
            found = "; ".join(map(str, dict.fromkeys(self.spec_violations)))
            raise AssertionError(f"calls the Bot API does not allow: {found}")

    async def close(self) -> None:
        """Answer held long polls at once and stop listening."""
        self._closing = True
        self._wake_pollers()
        if self._runner is not None:
            _STAMPED_PORTS.discard(self.port)
            await super().close()
            gc.unfreeze()

    @property
    def base_url(self) -> str:
        """python-telegram-bot's ``base_url``: the token and method are appended to it."""
        return f"http://127.0.0.1:{self._port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/file/bot"

    # ------------------------------------------------------------------ failures

    def fail_next(
        self,
        method: str,
        status: int,
        *,
        times: int = 1,
        retry_after: int | None = None,
        description: str | None = None,
        chat_id: int | str | None = None,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` (``"*"``: any) with an error.

        A 429 carries ``parameters.retry_after`` (1 unless given) and Telegram's description,
        ``Too Many Requests: retry after N``. With ``chat_id``, only calls for that chat count.
        """
        if status == 429 and retry_after is None:
            retry_after = 1
        self._add_failure(
            self._method_key(method), _Failure(status, description, retry_after, chat_id, times)
        )

    def drop_next(self, method: str, times: int = 1, *, chat_id: int | str | None = None) -> None:
        """Close the connection of the next ``times`` calls of ``method`` without an answer.

        The request is not processed: no message is sent. PTB raises ``NetworkError``.
        """
        self._add_drop(self._method_key(method), target=chat_id, times=times)

    # ------------------------------------------------------------------ updates for the bot

    def inject_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update for getUpdates; an ``update_id`` is assigned when missing."""
        if "update_id" not in update:
            update["update_id"] = self._next_update_id
        self._next_update_id = max(self._next_update_id, update["update_id"]) + 1
        self._pending.append(update)
        self._wake_pollers()
        return update

    def message(
        self,
        chat_id: int,
        text: str,
        *,
        user_id: int | None = None,
        chat_type: str | None = None,
        language_code: str | None = None,
        username: str | None = None,
        first_name: str | None = None,
        chat_title: str | None = None,
        thread_id: int | None = None,
    ) -> dict[str, Any]:
        """Queue a text message from a user and return the update.

        ``chat_type`` defaults to private for a positive id, supergroup for ``-100...`` and group
        for other negative ids; in a private chat the user is the chat. Every ``/command`` in the
        text gets a ``bot_command`` entity, as Telegram marks them. ``thread_id`` writes in that
        topic of a forum (``create_topic``): the message carries ``message_thread_id`` and
        ``is_topic_message`` (https://core.telegram.org/bots/api#message).
        """
        chat_type = chat_type or _chat_type_of(chat_id)
        if chat_type == "private":
            if user_id is not None and user_id != chat_id:
                raise ValueError("in a private chat the user id is the chat id")
            user_id = chat_id
        elif user_id is None:
            user_id = DEFAULT_USER_ID
        user = self._remember_user(
            user_id, username=username, first_name=first_name, language_code=language_code
        )
        chat = self._remember_chat(chat_id, chat_type=chat_type, title=chat_title, user=user)
        message: dict[str, Any] = {
            "message_id": self._take_message_id(chat_id),
            "from": user,
            "chat": chat,
            "date": int(time.time()),
            "text": text,
        }
        if thread_id is not None:
            if thread_id not in self.forum_topics.get(chat_id, {}):
                raise ValueError(f"chat {chat_id} has no topic {thread_id}; create_topic it")
            message.update(message_thread_id=thread_id, is_topic_message=True)
        entities = [
            {
                "type": "bot_command",
                "offset": _utf16_len(text[: match.start()]),
                "length": _utf16_len(match.group()),
            }
            for match in _COMMAND_RE.finditer(text)
        ]
        if entities:
            message["entities"] = entities
        self._messages[(chat_id, message["message_id"])] = message
        return self.inject_update({"message": dict(message)})

    def callback(
        self,
        chat_id: int,
        message_id: int,
        data: str,
        *,
        user_id: int | None = None,
        username: str | None = None,
        language_code: str | None = None,
    ) -> dict[str, Any]:
        """Queue a press of an inline button under the bot's message and return the update.

        The update carries the message as the bot sent it (when it did) and a fresh query id
        that ``answerCallbackQuery`` accepts.
        """
        if user_id is None:
            user_id = chat_id if _chat_type_of(chat_id) == "private" else DEFAULT_USER_ID
        user = self._remember_user(user_id, username=username, language_code=language_code)
        stored = self._messages.get((chat_id, message_id))
        message = (
            dict(stored)
            if stored is not None
            else {
                "message_id": message_id,
                "from": self.bot_user,
                "chat": self._chat_object(chat_id),
                "date": int(time.time()),
                "text": "",
            }
        )
        query_id = str(next(self._callback_ids))
        self._issued_callbacks.add(query_id)
        query = {
            "id": query_id,
            "from": user,
            "message": message,
            "chat_instance": str(abs(hash((chat_id, self.bot_user["id"])))),
            "data": data,
        }
        return self.inject_update({"callback_query": query})

    def my_chat_member(
        self,
        chat_id: int,
        *,
        new_status: str,
        old_status: str | None = None,
        chat_type: str | None = None,
        user_id: int | None = None,
        chat_title: str | None = None,
    ) -> dict[str, Any]:
        """Queue a change of the bot's own membership and return the update.

        As on Telegram, a user who blocks the bot (``kicked`` in a private chat) or a group that
        removes it (``kicked``/``left``) makes later sends there fail with 403 Forbidden: the
        chat joins ``blocked_chats``; ``member``/``administrator`` takes it out again.
        """
        chat_type = chat_type or _chat_type_of(chat_id)
        if user_id is None:
            user_id = chat_id if chat_type == "private" else DEFAULT_USER_ID
        if old_status is None:
            old_status = "member" if new_status in ("kicked", "left") else "left"
        user = self._remember_user(user_id)
        chat = self._remember_chat(chat_id, chat_type=chat_type, title=chat_title, user=user)
        if new_status in ("kicked", "left"):
            self.blocked_chats.add(chat_id)
        else:
            self.blocked_chats.discard(chat_id)
        update = {
            "my_chat_member": {
                "chat": chat,
                "from": user,
                "date": int(time.time()),
                "old_chat_member": self._member_object(self.bot_user, old_status),
                "new_chat_member": self._member_object(self.bot_user, new_status),
            }
        }
        return self.inject_update(update)

    def migrate_group(self, old_id: int, new_id: int, *, user_id: int | None = None) -> None:
        """Upgrade basic group ``old_id`` to supergroup ``new_id``, as Telegram does.

        Two service messages are queued: ``migrate_to_chat_id`` in the old group and
        ``migrate_from_chat_id`` in the new supergroup (https://core.telegram.org/bots/api#message),
        and from now on every call for the old id is refused with 400 and
        ``parameters.migrate_to_chat_id`` (https://core.telegram.org/bots/api#responseparameters).
        """
        if _chat_type_of(old_id) != "group" or _chat_type_of(new_id) != "supergroup":
            raise ValueError("a basic group (-N) becomes a supergroup (-100N)")
        user = self._remember_user(user_id or DEFAULT_USER_ID)
        title = self.chats.get(old_id, {}).get("title")
        old_chat = self._remember_chat(old_id, chat_type="group", title=title, user=user)
        new_chat = self._remember_chat(new_id, chat_type="supergroup", title=title, user=user)
        for chat, key, value in (
            (old_chat, "migrate_to_chat_id", new_id),
            (new_chat, "migrate_from_chat_id", old_id),
        ):
            message = {
                "message_id": self._take_message_id(chat["id"]),
                "from": user,
                "chat": chat,
                "date": int(time.time()),
                key: value,
            }
            self.inject_update({"message": message})
        self.migrated_chats[old_id] = new_id
        self.chat_admins.setdefault(new_id, set()).update(self.chat_admins.get(old_id, ()))

    def create_topic(self, chat_id: int, name: str) -> int:
        """Make ``chat_id`` a forum supergroup (``is_forum``) with a new topic; its
        ``message_thread_id`` is returned (https://core.telegram.org/bots/api#createforumtopic)."""
        if _chat_type_of(chat_id) != "supergroup":
            raise ValueError("only supergroups are forums")
        chat = self.chats.setdefault(chat_id, self._chat_object(chat_id))
        chat["is_forum"] = True
        topics = self.forum_topics.setdefault(chat_id, {})
        thread_id = self._take_message_id(chat_id)  # a topic's id is its creation message's
        topics[thread_id] = {"name": name, "is_closed": False}
        return thread_id

    def close_topic(self, chat_id: int, thread_id: int) -> None:
        """Close a topic: the bot, not an administrator, can no longer post in it."""
        self.forum_topics[chat_id][thread_id]["is_closed"] = True

    def delete_topic(self, chat_id: int, thread_id: int) -> None:
        self.forum_topics[chat_id].pop(thread_id)

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        """Updates not yet confirmed by a getUpdates offset."""
        return list(self._pending)

    # ------------------------------------------------------------------ what the bot did

    def messages_to(
        self, chat_id: int | str, *, thread_id: int | None = None, general: bool = False
    ) -> list[dict[str, Any]]:
        """The bot's messages in a chat, oldest first, as they are now (edits applied); with
        ``thread_id`` only those in that forum topic, with ``general`` only those in no topic."""
        messages = self._by_chat.get(chat_id, ())
        if thread_id is not None or general:
            return [m for m in messages if m.get("message_thread_id") == thread_id]
        return list(messages)

    def calls(self, method: str | None = None, *, ok: bool | None = None) -> list[TelegramCall]:
        """Recorded calls, optionally of one method and only the successful or failed ones."""
        return [
            call
            for call in self.sent
            if (method is None or call.method == method) and (ok is None or call.ok == ok)
        ]

    def commands_for(
        self, *, language_code: str = "", scope: dict[str, Any] | None = None
    ) -> list[dict[str, Any]] | None:
        """The command list set for a scope (default: the default scope) and language."""
        return self.commands.get((_scope_key(scope), language_code))

    @property
    def delivered(self) -> int:
        """How many sendMessage calls succeeded."""
        return self._delivered

    def stats(self) -> dict[str, Any]:
        """The counters, as JSON (also served at ``GET /_stats`` for a fake in another process).

        ``requests``: calls by method (``getUpdates`` included); ``answers``: calls but
        ``getUpdates`` by HTTP status answered (``"0"``: dropped); ``delivered``: successful
        sendMessage calls; ``rate_limited``: calls answered 429, whether a flood limit or
        ``fail_next`` refused them; ``limit_violations``: sends refused by a flood limit, in
        all and by rule; ``densest_second``: the most sends (free or paid, whichever is
        more) that arrived in any one second, those a 429 refused included: what the sender
        sent, which is over the cap exactly when a flood limit refused some of it.
        """
        answers = Counter(call.status for call in self.sent)
        free: list[float] = []
        paid: list[float] = []
        for call in self.sent:
            if call.status in (200, 429) and call.method in _SEND_METHODS:
                paid_send = call.params.get("allow_paid_broadcast") is True
                (paid if paid_send else free).append(call.at)
        return {
            "densest_second": max(densest_window(free), densest_window(paid)),
            "requests": dict(self.request_count),
            "answers": {str(status): n for status, n in sorted(answers.items())},
            "delivered": self._delivered,
            "rate_limited": answers[429],
            "limit_violations": len(self.limit_violations),
            "spec_violations": sorted({str(p) for p in self.spec_violations}),
            "violations_by_rule": dict(Counter(v.rule for v in self.limit_violations)),
        }

    @staticmethod
    def _is_delivered(call: TelegramCall) -> bool:
        return call.ok and call.method in ("sendMessage", "sendRichMessage")

    @staticmethod
    def _describe(call: TelegramCall) -> str:
        return f"{call.method}({call.chat_id})={call.status}"

    async def wait_for_poll(
        self,
        *,
        timeout: float = 5.0,  # noqa: ASYNC109 - the deadline is the point of this helper
    ) -> None:
        """Wait until a getUpdates request is held open, waiting for an update to arrive."""
        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(lambda: self._held_polls > 0)
        except TimeoutError:
            polls = self.request_count["getUpdates"]
            raise TimeoutError(f"no long poll held after {timeout}s ({polls} getUpdates)") from None

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        arrived = _arrived(request)
        raw_method = request.match_info["method"]
        method = self._canonical.get(raw_method.lower(), raw_method)
        self.request_count[method] += 1
        params = await _read_params(request)
        chat_id = params.get("chat_id")
        if isinstance(chat_id, str) and (known := self._by_username(chat_id)) is not None:
            params["chat_id"] = chat_id = known["id"]  # "@username" of a chat the fake knows
        call = TelegramCall(method, params, arrived, chat_id)
        if self.log_requests:
            _log.info("%s %s", method, params)
        # The flood limits count a send when it arrived, not once the latency the fake adds
        # has passed (the answer comes after the latency either way).
        admitted_at = arrived
        refused = self._admit(method, params, chat_id, at=admitted_at)
        try:
            if method != "getUpdates" and self.latency > 0:
                await asyncio.sleep(self.latency)
            if refused is not None:
                raise refused
            result = await self._answer(request.match_info["token"], method, params)
            call.status, call.response = 200, {"ok": True, "result": result}
        except _ApiError as err:
            body: dict[str, Any] = {
                "ok": False,
                "error_code": err.status,
                "description": err.description,
            }
            if err.parameters:
                body["parameters"] = err.parameters
            call.status, call.response = err.status, body
        except Dropped:
            call.status, call.response = 0, None
        if refused is None and call.status != 200:  # only a message sent counts
            self._uncount(method, params, chat_id, at=admitted_at)
        if method != "getUpdates":
            await self._record(call)
        if call.response is None:
            assert request.transport is not None
            request.transport.abort()
            raise asyncio.CancelledError  # aiohttp finishes the aborted request quietly
        return web.json_response(call.response, status=call.status)

    async def _handle_stats(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(self.stats())

    async def _handle_arrivals(self, request: web.Request) -> web.StreamResponse:
        """``[[chat_id, arrived, status], ...]``: every send that was counted (200 or 429),
        in the order handled; ``arrived`` on ``time.monotonic()``'s clock (the kernel's
        receive time), for a benchmark to set beside its own stamps."""
        return web.json_response(
            [
                [call.chat_id, call.at, call.status]
                for call in self.sent
                if call.status in (200, 429) and call.method in _SEND_METHODS
            ]
        )

    async def _handle_file(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(
            {"ok": False, "error_code": 404, "description": "Not Found"}, status=404
        )

    async def _answer(self, token: str, method: str, params: dict[str, Any]) -> Any:
        if token != self.token:
            if ":" not in token:
                raise _ApiError(404, "Not Found")
            raise _ApiError(401, "Unauthorized")
        handler = self._handlers.get(method)
        if method == "sendRichMessage" and self.bot_api_version < RICH_MESSAGES_SINCE:
            handler = None  # a server from before Bot API 10.1 does not know the method
        if handler is None:
            raise _ApiError(404, "Not Found")
        if self.check_spec:
            problems = telegram_spec.check_call(method, params)
            self.spec_violations += problems
            # Telegram ignores a parameter it does not know (the call goes through, the
            # option is lost: a test fails at the end); a value it cannot read is a 400.
            refused = next((p for p in problems if p.refused), None)
            if refused is not None:
                raise _ApiError(400, f"Bad Request: {refused}")
        chat_id = params.get("chat_id")
        if self._take_drop(method, chat_id):
            raise Dropped
        failure = self._take_failure(method, chat_id)
        if failure is not None:
            raise _failure_error(failure)
        if chat_id is not None and method not in ("getUpdates", "setMyCommands"):
            self._check_chat(chat_id)
        result = await handler(params)
        if method in _SEND_METHODS and params.get("allow_paid_broadcast") is True:
            self.paid_broadcasts += 1
        return result

    def _method_key(self, method: str) -> str:
        return method if method == "*" else self._canonical.get(method.lower(), method)

    def _check_chat(self, chat_id: int | str) -> None:
        if chat_id in self.migrated_chats:
            raise _ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": self.migrated_chats[chat_id]},
            )
        if chat_id in self.missing_chats or (
            isinstance(chat_id, str) and self._by_username(chat_id) is None
        ):
            raise _ApiError(400, "Bad Request: chat not found")
        if chat_id in self.blocked_chats:
            chat_type = self._chat_object(chat_id)["type"]
            if chat_type == "private":
                raise _ApiError(403, "Forbidden: bot was blocked by the user")
            raise _ApiError(403, f"Forbidden: bot was kicked from the {chat_type} chat")

    def _admit(
        self, method: str, params: dict[str, Any], chat_id: Any, *, at: float
    ) -> _ApiError | None:
        """The 429 a send arriving at ``at`` gets under the flood limits, or None: then it
        is counted in every window it falls in (whatever the answer to it turns out)."""
        if not self.enforce_limits or method not in _SEND_METHODS:
            return None
        if not isinstance(chat_id, int | str):
            chat_id = None
        paid = params.get("allow_paid_broadcast") is True
        try:
            self._check_limits(method, chat_id, paid=paid, now=at)
        except _ApiError as err:
            return err
        self._commit_send(chat_id, paid=paid, now=at)
        return None

    def _check_limits(
        self, method: str, chat_id: int | str | None, *, paid: bool, now: float
    ) -> None:
        tolerance = self.limit_tolerance
        limits = self._limits
        rule, wait = "", 0.0
        # A paid broadcast ignores the free global rate and has one of its own.
        all_sends = self._paid_sends if paid else limits.all_sends
        cap = self.paid_rate if paid else self.global_rate
        window = 1.0 - tolerance
        # Every window holding this send: ending at it, or at a send that arrived after it
        # and was handled before it (the few read in the same turn of the loop).
        del all_sends[: bisect.bisect_right(all_sends, now - 2.0)]  # long out of every window
        for end in (now, *all_sends[bisect.bisect_right(all_sends, now) :]):
            if end - now >= window:
                break
            first = bisect.bisect_right(all_sends, end - window)
            if bisect.bisect_right(all_sends, end) - first >= cap:
                rule, wait = "global", window - (end - all_sends[first])
                break
        if chat_id is not None and not rule:
            last = limits.last_in_chat.get(chat_id)
            gap = self.chat_interval - tolerance
            if last is not None and now - last < gap:
                rule, wait = "chat", gap - (now - last)
        if chat_id is not None and not rule and self._is_group(chat_id):
            sends = limits.group_sends.get(chat_id)
            window = GROUP_WINDOW_SECONDS - tolerance
            while sends and now - sends[0] >= window:
                sends.popleft()
            if sends is not None and len(sends) >= GROUP_MESSAGES_PER_WINDOW:
                rule, wait = "group", window - (now - sends[0])
        if rule:
            retry_after = max(1, math.ceil(wait))
            self.limit_violations.append(LimitViolation(now, method, chat_id, rule, retry_after))
            raise _ApiError(
                429,
                f"Too Many Requests: retry after {retry_after}",
                {"retry_after": retry_after},
            )

    def _commit_send(self, chat_id: int | str | None, *, paid: bool, now: float) -> None:
        bisect.insort(self._paid_sends if paid else self._limits.all_sends, now)
        if chat_id is None:
            return
        self._limits.last_in_chat[chat_id] = now
        if self._is_group(chat_id):
            self._limits.group_sends.setdefault(chat_id, deque()).append(now)

    def _uncount(self, method: str, params: dict[str, Any], chat_id: Any, *, at: float) -> None:
        """Take back what :meth:`_admit` counted for a send that was not made after all."""
        if not self.enforce_limits or method not in _SEND_METHODS:
            return
        paid = params.get("allow_paid_broadcast") is True
        windows = [self._paid_sends if paid else self._limits.all_sends]
        if isinstance(chat_id, int | str):
            if self._limits.last_in_chat.get(chat_id) == at:
                del self._limits.last_in_chat[chat_id]
            windows.append(self._limits.group_sends.get(chat_id, deque()))
        for window in windows:
            with contextlib.suppress(ValueError):
                window.remove(at)

    def _is_group(self, chat_id: int | str) -> bool:
        return bool(self._chat_object(chat_id)["type"] != "private")

    def _wake_pollers(self) -> None:
        event, self._updates_arrived = self._updates_arrived, asyncio.Event()
        event.set()

    # ------------------------------------------------------------------ methods

    async def _get_me(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise _ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        if "allowed_updates" in params:
            self.allowed_updates = list(params["allowed_updates"]) or None
        limit = min(max(int(params.get("limit", MAX_UPDATES_LIMIT)), 1), MAX_UPDATES_LIMIT)
        wait = min(max(float(params.get("timeout", 0)), 0.0), self.long_poll_cap)
        self._poll_generation += 1
        generation = self._poll_generation
        self._wake_pollers()  # an older long poll is answered with 409, as on Telegram
        self._confirm(params.get("offset"))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while True:
            batch = self._deliverable(limit)
            remaining = deadline - loop.time()
            if batch or self._closing or remaining <= 0:
                return batch
            arrived = self._updates_arrived
            self._held_polls += 1
            try:
                async with self._changed:
                    self._changed.notify_all()  # for wait_for_poll
                async with asyncio.timeout(remaining):
                    await arrived.wait()
            except TimeoutError:
                pass
            finally:
                self._held_polls -= 1
            if generation != self._poll_generation:
                raise _ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; "
                    "make sure that only one bot instance is running",
                )

    def _confirm(self, offset: Any) -> None:
        if not isinstance(offset, int) or offset == 0:
            return
        pending = self._pending
        if offset < 0:
            while len(pending) > -offset:
                pending.popleft()
            return
        while pending and pending[0]["update_id"] < offset:
            pending.popleft()

    def _deliverable(self, limit: int) -> list[dict[str, Any]]:
        allowed = self.allowed_updates
        kept: deque[dict[str, Any]] = deque()
        for update in self._pending:
            kind = next((key for key in update if key != "update_id"), "")
            if (allowed is None and kind not in _NOT_DELIVERED_BY_DEFAULT) or (
                allowed is not None and kind in allowed
            ):
                kept.append(update)
        self._pending = kept  # Telegram does not keep updates of types not asked for
        return list(itertools.islice(kept, limit))

    async def _send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = _required(params, "chat_id")
        thread_id = self._check_thread(chat_id, params.get("message_thread_id"))
        text, entities = _parse_text(params)
        markup = _check_markup(params.get("reply_markup"))
        replied = self._replied_message(chat_id, params)
        message: dict[str, Any] = {
            "message_id": self._take_message_id(chat_id),
            "from": self.bot_user,
            "chat": self._chat_object(chat_id),
            "date": int(time.time()),
            "text": text,
        }
        if entities:
            message["entities"] = entities
        preview = _link_preview(params)
        if preview is not None:
            message["link_preview_options"] = preview
        if markup is not None:
            message["reply_markup"] = markup
        if replied is not None:
            message["reply_to_message"] = replied
        if thread_id is not None:
            message.update(message_thread_id=thread_id, is_topic_message=True)
        self._messages[(chat_id, message["message_id"])] = message
        self._by_chat.setdefault(chat_id, []).append(message)
        self._delivered += 1
        return dict(message)

    async def _send_photo(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://core.telegram.org/bots/api#sendphoto: ``photo`` is a file_id, an HTTP URL
        or a new upload (multipart/form-data, the file in the ``photo`` field or in the field
        an ``attach://NAME`` value names, https://core.telegram.org/bots/api#sending-files).
        The fake knows no file_ids and fetches no URLs: both are refused as a file_id or URL
        Telegram cannot use is. An upload must be a PNG or JPEG within the size, sides and
        ratio limits (the fake reads PNG dimensions; a JPEG is taken as 1x1), else 400 with
        the descriptions Telegram gives. The sent Message carries ``photo`` (an array of
        PhotoSize, https://core.telegram.org/bots/api#photosize) and the parsed ``caption``."""
        chat_id = _required(params, "chat_id")
        thread_id = self._check_thread(chat_id, params.get("message_thread_id"))
        photo = params.get("photo")
        if isinstance(photo, str) and photo.startswith("attach://"):
            photo = params.get(photo.removeprefix("attach://"))
        if photo is None:
            raise _ApiError(400, "Bad Request: there is no photo in the request")
        if not isinstance(photo, _UploadedFile):
            raise _ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        data = photo.data
        if len(data) > MAX_PHOTO_BYTES:
            raise _ApiError(400, "Bad Request: PHOTO_SAVE_FILE_INVALID")
        width, height = _image_size(data)
        if width + height > MAX_PHOTO_SIDES or max(width, height) > MAX_PHOTO_RATIO * min(
            width, height
        ):
            raise _ApiError(400, "Bad Request: PHOTO_INVALID_DIMENSIONS")
        caption, entities = "", []
        if params.get("caption"):
            caption, entities = _parse_text({**params, "text": params["caption"]})
            if len(caption) > MAX_CAPTION_CHARS:
                raise _ApiError(400, "Bad Request: message caption is too long")
        markup = _check_markup(params.get("reply_markup"))
        message_id = self._take_message_id(chat_id)
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": self.bot_user,
            "chat": self._chat_object(chat_id),
            "date": int(time.time()),
            "photo": [
                {
                    "file_id": f"AgAC-photo-{chat_id}-{message_id}",
                    "file_unique_id": f"AQAD{message_id}",
                    "width": width,
                    "height": height,
                    "file_size": len(data),
                }
            ],
        }
        if caption:
            message["caption"] = caption
        if entities:
            message["caption_entities"] = entities
        if markup is not None:
            message["reply_markup"] = markup
        if thread_id is not None:
            message.update(message_thread_id=thread_id, is_topic_message=True)
        self._messages[(chat_id, message_id)] = message
        self._by_chat.setdefault(chat_id, []).append(message)
        self.photos.append({"chat_id": chat_id, "data": data, "message": message})
        return dict(message)

    async def _send_rich_message(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://core.telegram.org/bots/api#sendrichmessage: ``chat_id`` and
        ``rich_message`` (an InputRichMessage); the sent Message carries ``rich_message``
        (https://core.telegram.org/bots/api#richmessage) and no ``text``."""
        chat_id = _required(params, "chat_id")
        thread_id = self._check_thread(chat_id, params.get("message_thread_id"))
        rich = check_rich_message(params.get("rich_message"), version=self.bot_api_version)
        if chat_id in self.rich_refused_chats:
            # The Bot API documents no text for a chat that cannot show rich messages; the
            # fake answers a plain 400 as for any other refused payload.
            raise _ApiError(400, "Bad Request: rich messages can't be sent to the chat")
        markup = _check_markup(params.get("reply_markup"))
        message: dict[str, Any] = {
            "message_id": self._take_message_id(chat_id),
            "from": self.bot_user,
            "chat": self._chat_object(chat_id),
            "date": int(time.time()),
            "rich_message": rich,
        }
        if markup is not None:
            message["reply_markup"] = markup
        if thread_id is not None:
            message.update(message_thread_id=thread_id, is_topic_message=True)
        self._messages[(chat_id, message["message_id"])] = message
        self._by_chat.setdefault(chat_id, []).append(message)
        self._delivered += 1
        return dict(message)

    def _check_thread(self, chat_id: int | str, thread_id: Any) -> int | None:
        """The forum topic a send goes to (https://core.telegram.org/bots/api#sendmessage
        message_thread_id), or Telegram's refusal: a thread that is not there (deleted, or
        never a topic) is "message thread not found", a closed topic "TOPIC_CLOSED"
        (tdlib/telegram-bot-api#472 and #854 show both answers)."""
        if thread_id is None:
            return None
        topic = (
            self.forum_topics.get(chat_id, {}).get(thread_id) if type(thread_id) is int else None
        )
        if topic is None:
            raise _ApiError(400, "Bad Request: message thread not found")
        if topic["is_closed"]:
            raise _ApiError(400, "Bad Request: TOPIC_CLOSED")
        return thread_id

    async def _edit_message_text(self, params: dict[str, Any]) -> dict[str, Any] | bool:
        """https://core.telegram.org/bots/api#editmessagetext: ``text`` "required if
        rich_message isn't specified"; ``rich_message`` (Bot API 10.1) is the new rich
        content, checked as sendRichMessage checks it (:func:`check_rich_message`)."""
        if "inline_message_id" in params:
            return True
        if params.get("rich_message") is not None:
            return self._edit_rich(params)
        message = self._message_to_edit(params)
        text, entities = _parse_text(params)
        markup = _check_markup(params.get("reply_markup"))
        if (
            text == message.get("text")
            and entities == message.get("entities", [])
            and markup == message.get("reply_markup")
        ):
            raise _not_modified()
        message["text"] = text
        message.pop("entities", None)
        if entities:
            message["entities"] = entities
        _set_markup(message, markup)
        message["edit_date"] = int(time.time())
        return dict(message)

    def _edit_rich(self, params: dict[str, Any]) -> dict[str, Any]:
        """editMessageText with ``rich_message``
        (https://core.telegram.org/bots/api/methods/editmessagetext.md: "Use this method to
        edit text, rich and game messages"; ``text`` and ``rich_message`` are alternatives).
        A server older than Bot API 10.1 does not know the field and asks for ``text``, as it
        would of any edit without one; the message edited becomes a rich one (no ``text``)."""
        if self.bot_api_version < RICH_MESSAGES_SINCE:
            raise _ApiError(400, "Bad Request: message text is empty")
        if params.get("text") is not None:
            # "text ... required if rich_message isn't specified": one of the two, not both.
            raise _rich_error("exactly one of text and rich_message must be specified")
        message = self._message_to_edit(params)
        rich = check_rich_message(params.get("rich_message"), version=self.bot_api_version)
        if message["chat"]["id"] in self.rich_refused_chats:
            raise _ApiError(400, "Bad Request: rich messages can't be sent to the chat")
        markup = _check_markup(params.get("reply_markup"))
        if rich == message.get("rich_message") and markup == message.get("reply_markup"):
            raise _not_modified()
        message.pop("text", None)
        message.pop("entities", None)
        message["rich_message"] = rich
        _set_markup(message, markup)
        message["edit_date"] = int(time.time())
        return dict(message)

    async def _edit_message_reply_markup(self, params: dict[str, Any]) -> dict[str, Any] | bool:
        if "inline_message_id" in params:
            return True
        message = self._message_to_edit(params)
        markup = _check_markup(params.get("reply_markup"))
        if markup == message.get("reply_markup"):
            raise _not_modified()
        _set_markup(message, markup)
        message["edit_date"] = int(time.time())
        return dict(message)

    async def _answer_callback_query(self, params: dict[str, Any]) -> bool:
        query_id = str(_required(params, "callback_query_id"))
        # A query is answered once (https://core.telegram.org/bots/api#answercallbackquery);
        # another answer gets the same refusal as an unknown or expired one.
        if query_id not in self._issued_callbacks or query_id in self.callback_answers:
            raise _ApiError(
                400,
                "Bad Request: query is too old and response timeout expired or query ID is invalid",
            )
        self.callback_answers[query_id] = params
        return True

    async def _set_my_commands(self, params: dict[str, Any]) -> bool:
        if self.fail_set_my_commands:
            raise _ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        commands = _required(params, "commands")
        for command in commands:
            if not _BOT_COMMAND_NAME_RE.match(str(command.get("command", ""))):
                raise _ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise _ApiError(400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        key = (_scope_key(params.get("scope")), str(params.get("language_code", "")))
        self.commands[key] = [dict(command) for command in commands]
        return True

    async def _delete_my_commands(self, params: dict[str, Any]) -> bool:
        key = (_scope_key(params.get("scope")), str(params.get("language_code", "")))
        self.commands.pop(key, None)
        return True

    async def _get_my_commands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        key = (_scope_key(params.get("scope")), str(params.get("language_code", "")))
        return self.commands.get(key, [])

    async def _get_chat_member(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = _required(params, "chat_id")
        user_id = int(_required(params, "user_id"))
        user = self.users.get(user_id) or (
            self.bot_user if user_id == self.bot_user["id"] else _user_object(user_id)
        )
        if self.chat_creators.get(chat_id) == user_id:
            status = "creator"
        elif user_id in self.chat_admins.get(chat_id, ()):
            status = "administrator"
        else:
            status = "member"
        return self._member_object(user, status)

    async def _get_chat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat_object(_required(params, "chat_id"))
        return {
            **chat,
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": False,
                "limited_gifts": False,
                "unique_gifts": False,
                "premium_subscription": False,
                "gifts_from_channels": False,
            },
        }

    async def _set_webhook(self, params: dict[str, Any]) -> bool:
        url = str(params.get("url", ""))
        if not url:
            self.webhook = None
            return True
        if not url.startswith("https://"):  # https://core.telegram.org/bots/api#setwebhook
            raise _ApiError(
                400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
            )
        if params.get("drop_pending_updates"):
            self._pending.clear()
        if "allowed_updates" in params:
            self.allowed_updates = list(params["allowed_updates"]) or None
        self.webhook = dict(params)
        self._wake_pollers()
        return True

    async def _delete_webhook(self, params: dict[str, Any]) -> bool:
        if params.get("drop_pending_updates"):
            self._pending.clear()
        self.webhook = None
        return True

    async def _get_webhook_info(self, params: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "url": self.webhook["url"] if self.webhook else "",
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending),
        }
        if self.webhook:
            info["max_connections"] = int(self.webhook.get("max_connections", 40))
            if self.allowed_updates is not None:
                info["allowed_updates"] = self.allowed_updates
        return info

    # ------------------------------------------------------------------ the fake's world

    def _take_message_id(self, chat_id: int | str) -> int:
        message_id = self._next_message_id.get(chat_id, 1)
        self._next_message_id[chat_id] = message_id + 1
        return message_id

    def _replied_message(self, chat_id: int | str, params: dict[str, Any]) -> dict[str, Any] | None:
        """The message a send replies to, without its own reply, as Telegram nests it."""
        reply = params.get("reply_parameters")
        if not isinstance(reply, dict):
            if "reply_to_message_id" not in params:
                return None
            reply = {
                "message_id": params["reply_to_message_id"],
                "allow_sending_without_reply": params.get("allow_sending_without_reply"),
            }
        target: Any = (reply.get("chat_id", chat_id), reply.get("message_id"))
        replied = self._messages.get(target)
        if replied is None:
            if reply.get("allow_sending_without_reply"):
                return None
            raise _ApiError(400, "Bad Request: message to be replied not found")
        return {k: v for k, v in replied.items() if k != "reply_to_message"}

    def _message_to_edit(self, params: dict[str, Any]) -> dict[str, Any]:
        key = (_required(params, "chat_id"), _required(params, "message_id"))
        message = self._messages.get(key)
        if message is None:
            raise _ApiError(400, "Bad Request: message to edit not found")
        return message

    def _remember_user(
        self,
        user_id: int,
        *,
        username: str | None = None,
        first_name: str | None = None,
        language_code: str | None = None,
    ) -> dict[str, Any]:
        user = self.users.get(user_id) or _user_object(user_id)
        if username is not None:
            user["username"] = username
        if first_name is not None:
            user["first_name"] = first_name
        if language_code is not None:
            user["language_code"] = language_code
        self.users[user_id] = user
        return dict(user)

    def _remember_chat(
        self,
        chat_id: int,
        *,
        chat_type: str,
        title: str | None,
        user: dict[str, Any],
    ) -> dict[str, Any]:
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = user["first_name"]
            if "username" in user:
                chat["username"] = user["username"]
        else:
            known = self.chats.get(chat_id, {})
            chat["title"] = title or known.get("title") or f"Group {abs(chat_id)}"
            if known.get("is_forum"):
                chat["is_forum"] = True
        self.chats[chat_id] = chat
        return dict(chat)

    def _chat_object(self, chat_id: int | str) -> dict[str, Any]:
        chat = self.chats.get(chat_id)
        if chat is None and isinstance(chat_id, str):
            chat = self._by_username(chat_id)
        if chat is None:
            chat_type = _chat_type_of(chat_id)
            chat = {"id": chat_id, "type": chat_type}
            if chat_type == "private":
                chat["first_name"] = f"User {chat_id}"
            else:
                chat["title"] = f"Group {str(chat_id).lstrip('-@')}"
        return dict(chat)

    def _by_username(self, name: str) -> dict[str, Any] | None:
        wanted = name.lstrip("@").lower()
        return next(
            (c for c in self.chats.values() if str(c.get("username", "")).lower() == wanted),
            None,
        )

    def _member_object(self, user: dict[str, Any], status: str) -> dict[str, Any]:
        member: dict[str, Any] = {"user": dict(user), "status": status}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update(dict.fromkeys(_ADMIN_RIGHTS, True))
            member.update(can_be_edited=False, is_anonymous=False, can_promote_members=False)
        elif status == "kicked":
            member["until_date"] = 0
        return member


# ---------------------------------------------------------------------- helpers


def _chat_type_of(chat_id: int | str) -> str:
    if isinstance(chat_id, str):
        return "channel"
    if chat_id > 0:
        return "private"
    return "supergroup" if str(chat_id).startswith("-100") else "group"


def _user_object(user_id: int) -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _scope_key(scope: dict[str, Any] | None) -> str:
    return json.dumps(scope or {"type": "default"}, sort_keys=True)


def _required(params: dict[str, Any], name: str) -> Any:
    if name not in params or params[name] in ("", None):
        raise _ApiError(400, f"Bad Request: {name} is empty")
    return params[name]


def _failure_error(failure: _Failure) -> _ApiError:
    parameters = None
    if failure.retry_after is not None:
        parameters = {"retry_after": failure.retry_after}
    description = failure.description or _DEFAULT_DESCRIPTIONS.get(
        failure.status, f"Error {failure.status}"
    )
    if failure.status == 429 and failure.description is None:
        description = f"Too Many Requests: retry after {failure.retry_after}"
    return _ApiError(failure.status, description, parameters)


_DEFAULT_DESCRIPTIONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _not_modified() -> _ApiError:
    return _ApiError(
        400,
        "Bad Request: message is not modified: specified new message content and reply "
        "markup are exactly the same as a current content and reply markup of the message",
    )


def _set_markup(message: dict[str, Any], markup: dict[str, Any] | None) -> None:
    if markup is None:
        message.pop("reply_markup", None)
    else:
        message["reply_markup"] = markup


def _link_preview(params: dict[str, Any]) -> dict[str, Any] | None:
    options = params.get("link_preview_options")
    if isinstance(options, dict):
        return dict(options)
    if params.get("disable_web_page_preview") is True:
        return {"is_disabled": True}
    return None


_INLINE_BUTTON_ACTIONS = frozenset(
    field["name"]
    for field in telegram_spec.spec()["types"]["InlineKeyboardButton"]["fields"]
    if field["name"] not in ("text", "style", "icon_custom_emoji_id")
)


def _check_markup(markup: Any) -> dict[str, Any] | None:
    """Validate a reply_markup; return what a Message carries (inline keyboards only)."""
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise _ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return None
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise _ApiError(400, "Bad Request: can't parse inline keyboard button: field "
                        "\"inline_keyboard\" must be an Array of Arrays")  # fmt: skip
    for row in rows:
        for button in row:
            if not isinstance(button, dict) or not button.get("text"):
                raise _ApiError(400, "Bad Request: can't parse inline keyboard button: "
                                "Text buttons are unallowed in the inline keyboard")  # fmt: skip
            data = button.get("callback_data")
            if data is not None and not 1 <= len(str(data).encode()) <= MAX_CALLBACK_DATA_BYTES:
                raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
            # InlineKeyboardButton (https://core.telegram.org/bots/api#inlinekeyboardbutton):
            # "Exactly one of the optional fields" other than its looks must be used; a
            # field Telegram does not know (a misspelt one) is ignored, leaving none.
            if not any(name in button for name in _INLINE_BUTTON_ACTIONS):
                raise _ApiError(400, "Bad Request: can't parse inline keyboard button: "
                                "Text buttons are unallowed in the inline keyboard")  # fmt: skip
    return {"inline_keyboard": rows}


# --- rich messages -------------------------------------------------------------------
# The Bot API's pages say what the fake accepts; it refuses everything else with 400. The
# Bot API names no error texts for rich messages: the fake's are its own, all "Bad Request:".

# RichText (https://core.telegram.org/bots/api#richtext): a String, an Array of RichText, or
# one of the typed objects. The formatting ones have just ``text``; RichTextUrl
# (https://core.telegram.org/bots/api#richtexturl) has ``text`` and ``url``.
_RICH_TEXT_STYLES = frozenset(
    {"bold", "italic", "underline", "strikethrough", "spoiler", "subscript", "superscript",
     "marked", "code"}
)  # fmt: skip
# RichMessageButton.style (https://core.telegram.org/bots/api#richmessagebutton): "danger",
# "success", "primary" or "link" ("link" only for callback buttons).
_BUTTON_STYLES = frozenset({"danger", "success", "primary", "link"})
# RichMessageButton: "Exactly one of the fields other than text and style must be used".
_BUTTON_KINDS = (
    "url", "callback_data", "web_app", "login_url", "switch_inline_query",
    "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
    "disabled",
)  # fmt: skip


def _rich_error(what: str) -> _ApiError:
    return _ApiError(400, f"Bad Request: can't parse rich message: {what}")


@dataclass(slots=True)
class _RichCount:
    chars: int = 0
    blocks: int = 0
    depth: int = 0


def _rich_text(value: Any, count: _RichCount, depth: int, *, plain: bool = False) -> None:
    """A RichText; ``plain`` (a button's text: "May contain only plain text, custom emoji
    and date time entities") allows strings alone. ``depth`` is the level of what holds it;
    each formatting object is a level more ("levels of nested formatting and blocks")."""
    if isinstance(value, str):
        count.chars += len(value)
        return
    if isinstance(value, list):
        for part in value:
            _rich_text(part, count, depth, plain=plain)
        return
    if plain or not isinstance(value, dict):
        raise _rich_error("invalid rich text")
    kind = value.get("type")
    if kind == "url":
        url = value.get("url")
        if not isinstance(url, str) or not re.match(r"(?i)(https?|tg)://", url):
            raise _rich_error("invalid URL")
    elif kind not in _RICH_TEXT_STYLES:
        raise _rich_error(f"unsupported rich text type {kind!r}")
    if "text" not in value:
        raise _rich_error(f'field "text" is missing in rich text {kind}')
    count.depth = max(count.depth, depth + 1)
    _rich_text(value["text"], count, depth + 1)


def _rich_button(button: Any, count: _RichCount, depth: int) -> None:
    """https://core.telegram.org/bots/api#richmessagebutton"""
    if not isinstance(button, dict) or "text" not in button:
        raise _rich_error("invalid button")
    _rich_text(button["text"], count, depth, plain=True)
    if not button["text"]:
        raise _rich_error("button text is empty")
    kinds = [kind for kind in _BUTTON_KINDS if kind in button]
    if len(kinds) != 1:
        raise _rich_error("exactly one button kind must be specified")
    style = button.get("style")
    if style is not None and (
        style not in _BUTTON_STYLES or (style == "link" and kinds != ["callback_data"])
    ):
        raise _rich_error("invalid button style")
    data = button.get("callback_data")
    if data is not None and not (
        isinstance(data, str) and 1 <= len(data.encode()) <= MAX_CALLBACK_DATA_BYTES
    ):
        raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")


def _rich_block(block: Any, count: _RichCount, depth: int, version: tuple[int, int]) -> None:
    """One InputRichBlock (https://core.telegram.org/bots/api#inputrichblock): the kinds
    a digest uses, each with the fields of its page."""
    if not isinstance(block, dict):
        raise _rich_error("invalid block")
    count.blocks += 1
    count.depth = max(count.depth, depth)
    kind = block.get("type")
    if kind in ("paragraph", "footer"):
        # InputRichBlockParagraph / InputRichBlockFooter: ``text``
        _rich_text(_required_field(block, "text"), count, depth)
    elif kind == "heading":
        # InputRichBlockSectionHeading: ``text``, ``size`` "1-6, 1 is the largest"
        _rich_text(_required_field(block, "text"), count, depth)
        size = block.get("size")
        if type(size) is not int or not 1 <= size <= 6:
            raise _rich_error("heading size must be 1-6")
    elif kind == "details":
        # InputRichBlockDetails: ``summary``, ``blocks``, optional ``is_open``
        _rich_text(_required_field(block, "summary"), count, depth)
        inner = _required_field(block, "blocks")
        if not isinstance(inner, list):
            raise _rich_error('field "blocks" must be an Array')
        if block.get("is_open") not in (None, True, False):
            raise _rich_error('field "is_open" must be a Boolean')
        for child in inner:
            _rich_block(child, count, depth + 1, version)
    elif kind == "buttons" and version >= RICH_BUTTONS_SINCE:
        # InputRichBlockButtons: ``buttons`` 1-8, optional ``align`` left/center/right
        buttons = _required_field(block, "buttons")
        if not isinstance(buttons, list) or not 1 <= len(buttons) <= MAX_RICH_BUTTONS:
            raise _rich_error("a button row must have 1-8 buttons")
        if block.get("align") not in (None, "left", "center", "right"):
            raise _rich_error("invalid button alignment")
        for button in buttons:
            _rich_button(button, count, depth)
    elif kind == "expandable_blockquote" and version >= RICH_BUTTONS_SINCE:
        # InputRichBlockExpandableBlockQuotation: ``text``, optional ``credit``
        _rich_text(_required_field(block, "text"), count, depth)
        if "credit" in block:
            _rich_text(block["credit"], count, depth)
    else:
        raise _rich_error(f"unsupported block type {kind!r}")


def _required_field(block: dict[str, Any], name: str) -> Any:
    if name not in block:
        raise _rich_error(f'field "{name}" is missing in block {block.get("type")}')
    return block[name]


def check_rich_message(rich: Any, *, version: tuple[int, int] = BOT_API_VERSION) -> dict[str, Any]:
    """An InputRichMessage as a Bot API ``version`` server checks it; returns the
    RichMessage a sent Message carries, or raises the 400 (``_ApiError``).

    "Exactly one of the fields html, markdown, or blocks must be used"
    (https://core.telegram.org/bots/api#inputrichmessage); ``blocks`` came in Bot API 10.2.
    The fake checks explicit blocks; HTML and Markdown content is stored unparsed.
    """
    if not isinstance(rich, dict):
        raise _ApiError(400, "Bad Request: rich_message is empty")
    given = [name for name in ("html", "markdown", "blocks") if rich.get(name) is not None]
    if len(given) != 1:
        raise _rich_error("exactly one of html, markdown and blocks must be specified")
    if "blocks" in given and version < RICH_BLOCKS_SINCE:
        raise _rich_error('field "blocks" is not supported')
    for flag in ("is_rtl", "skip_entity_detection"):
        if rich.get(flag) not in (None, True, False):
            raise _rich_error(f'field "{flag}" must be a Boolean')
    if "blocks" not in given:
        return {"blocks": [{"type": "paragraph", "text": rich[given[0]]}]}
    blocks = rich["blocks"]
    if not isinstance(blocks, list) or not blocks:
        raise _rich_error('field "blocks" must be a non-empty Array')
    count = _RichCount()
    for block in blocks:
        _rich_block(block, count, 1, version)
    if count.chars > MAX_RICH_TEXT_CHARS:
        raise _ApiError(400, "Bad Request: rich message is too long")
    if count.blocks > MAX_RICH_BLOCKS:
        raise _ApiError(400, "Bad Request: too many blocks in the rich message")
    if count.depth > MAX_RICH_DEPTH:
        raise _ApiError(400, "Bad Request: rich message is nested too deeply")
    result: dict[str, Any] = {"blocks": blocks}
    if rich.get("is_rtl"):
        result["is_rtl"] = True
    return result


def _parse_text(params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Return the message text and entities Telegram would store, or raise its 400."""
    raw = params.get("text")
    if not isinstance(raw, str):
        raise _ApiError(400, "Bad Request: message text is empty")
    parse_mode = str(params.get("parse_mode") or "")
    entities: list[dict[str, Any]] = list(params.get("entities") or [])
    if parse_mode.lower() == "html":
        text, parsed = _parse_html(raw)
        entities = [dict(entity) for entity in parsed]
    elif parse_mode and parse_mode.lower() not in ("markdown", "markdownv2"):
        raise _ApiError(400, f"Bad Request: unsupported parse_mode {parse_mode}")
    else:
        text = raw
    stripped = text.lstrip()
    if len(stripped) != len(text):
        shift = _utf16_len(text[: len(text) - len(stripped)])
        entities = [{**e, "offset": max(0, e["offset"] - shift)} for e in entities]
    text = stripped.rstrip()
    if not text:
        raise _ApiError(400, "Bad Request: message text is empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise _ApiError(400, "Bad Request: message is too long")
    return text, entities


# A digest sent to many chats is the same text each time. Parsing it once keeps the fake's
# CPU per send below the bot's, so that at 1,000 sends a second it reads requests as they
# arrive and does not count its own backlog as a burst against the limits it enforces.
@functools.lru_cache(maxsize=256)
def _parse_html(source: str) -> tuple[str, tuple[dict[str, Any], ...]]:
    text, entities = _TelegramHTML.parse(source)
    return text, tuple(entities)


class _TelegramHTML(HTMLParser):
    """Telegram's HTML parse mode: the supported tags, balanced; four named entities
    (https://core.telegram.org/bots/api#html-style)."""

    _TAGS: ClassVar[dict[str, str]] = {
        "b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline",
        "ins": "underline", "s": "strikethrough", "strike": "strikethrough",
        "del": "strikethrough", "a": "text_link", "code": "code", "pre": "pre",
        "tg-spoiler": "spoiler", "span": "spoiler", "blockquote": "blockquote",
        "tg-emoji": "custom_emoji",
    }  # fmt: skip
    _NAMED: ClassVar[dict[str, str]] = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=False)
        self._source = source
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self._parts: list[str] = []
        self._length = 0  # UTF-16 code units so far, the unit of entity offsets
        self._open: list[tuple[str, dict[str, Any]]] = []
        self.entities: list[dict[str, Any]] = []

    @classmethod
    def parse(cls, source: str) -> tuple[str, list[dict[str, Any]]]:
        parser = cls(source)
        parser.feed(source)
        parser.close()
        if parser._open:
            raise parser._error(
                f'Can\'t find end tag corresponding to start tag "{parser._open[-1][0]}"'
            )
        entities = sorted(parser.entities, key=lambda e: (e["offset"], -e["length"]))
        return "".join(parser._parts), entities

    def _error(self, message: str) -> _ApiError:
        return _ApiError(400, f"Bad Request: can't parse entities: {message}")

    def _byte_offset(self) -> int:
        line, column = self.getpos()
        index = self._line_starts[line - 1] + column
        return len(self._source[:index].encode())

    def _add(self, text: str) -> None:
        self._parts.append(text)
        self._length += _utf16_len(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        kind = self._TAGS.get(tag)
        if kind is None:
            raise self._error(f'Unsupported start tag "{tag}" at byte offset {self._byte_offset()}')
        attributes = dict(attrs)
        entity: dict[str, Any] = {"type": kind, "offset": self._length}
        if tag == "span" and attributes.get("class") != "tg-spoiler":
            raise self._error(
                f'Tag "span" must have class "tg-spoiler" at byte offset {self._byte_offset()}'
            )
        if tag == "a":
            entity["url"] = attributes.get("href") or ""
        elif tag == "blockquote" and "expandable" in attributes:
            entity["type"] = "expandable_blockquote"
        elif tag == "tg-emoji":
            entity["custom_emoji_id"] = attributes.get("emoji-id") or ""
        elif tag == "code" and self._open and self._open[-1][0] == "pre":
            entity["type"] = ""  # <pre><code class="language-x"> is one pre entity
            language = (attributes.get("class") or "").removeprefix("language-")
            if language:
                self._open[-1][1]["language"] = language
        self._open.append((tag, entity))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raise self._error(f'Unsupported start tag "{tag}" at byte offset {self._byte_offset()}')

    def handle_endtag(self, tag: str) -> None:
        if not self._open:
            raise self._error(f"Unexpected end tag at byte offset {self._byte_offset()}")
        expected, entity = self._open.pop()
        if tag != expected:
            raise self._error(
                f"Unmatched end tag at byte offset {self._byte_offset()}, "
                f'expected "</{expected}>", found "</{tag}>"'
            )
        entity["length"] = self._length - entity["offset"]
        if entity["type"] and entity["length"] > 0 and entity.get("url", True):
            self.entities.append(entity)

    def handle_data(self, data: str) -> None:
        self._add(data)

    def handle_entityref(self, name: str) -> None:
        self._add(self._NAMED.get(name, f"&{name};"))

    def handle_charref(self, name: str) -> None:
        try:
            code = int(name[1:], 16) if name[:1] in ("x", "X") else int(name)
            self._add(chr(code))
        except (ValueError, OverflowError):
            self._add(f"&#{name};")

    def handle_comment(self, data: str) -> None:
        raise self._error(f'Unsupported start tag "!--" at byte offset {self._byte_offset()}')

    def handle_decl(self, decl: str) -> None:
        raise self._error(f'Unsupported start tag "!" at byte offset {self._byte_offset()}')

    def handle_pi(self, data: str) -> None:
        raise self._error(f'Unsupported start tag "?" at byte offset {self._byte_offset()}')


class _UploadedFile(dict[str, Any]):
    """A file of a multipart body, as the call's parameters show it (its name and size);
    its bytes in ``data``."""

    def __init__(self, data: bytes, *, filename: str) -> None:
        super().__init__(filename=filename, size=len(data))
        self.data = data


async def _read_params(request: web.Request) -> dict[str, Any]:
    """The call's parameters, typed as Telegram reads them, from query, form or JSON body."""
    params: dict[str, Any] = {k: _typed(k, v) for k, v in request.query.items()}
    if not request.can_read_body:
        return params
    if request.content_type == "application/json":
        body = await request.json()
        if isinstance(body, dict):  # Telegram also takes "123" and JSON-in-a-string here
            params.update({k: _typed(k, v) if isinstance(v, str) else v for k, v in body.items()})
        return params
    form = await request.post()
    for key, value in form.items():
        if isinstance(value, web.FileField):  # an uploaded file
            data = value.file.read()
            params[key] = _UploadedFile(data, filename=value.filename)
        elif isinstance(value, str):
            params[key] = _typed(key, value)
        else:
            params[key] = {"size": len(value)}
    return params


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _image_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG (from its IHDR chunk); a JPEG counts as 1x1; anything else
    is refused as Telegram refuses a file it cannot read as an image."""
    if data.startswith(_PNG_SIGNATURE) and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        if width > 0 and height > 0:
            return width, height
    elif data.startswith(b"\xff\xd8\xff"):
        return 1, 1
    raise _ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED")


def _typed(key: str, value: str) -> Any:
    if key not in _JSON_PARAMS:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value  # e.g. chat_id="@channelname"


__all__ = [
    "BOT_API_VERSION",
    "DEFAULT_BOT_USERNAME",
    "DEFAULT_TOKEN",
    "FakeTelegram",
    "LimitViolation",
    "TelegramCall",
    "check_rich_message",
]
