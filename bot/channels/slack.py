"""Slack: messages out (:class:`SlackSender`) and commands in (:class:`SlackChannel`).

Both sides share one :class:`~slack_sdk.web.async_client.AsyncWebClient` from
:func:`make_client`. slack-sdk's errors are translated here, at the boundary, into the
``bot.errors`` tree (:func:`translate_error`); nothing past this module reads a Slack error
code. Error reasons are built from Slack's error codes and HTTP statuses only, never from
the library's exception texts, so no reason carries a token.

Inbound, a Bolt :class:`~slack_bolt.async_app.AsyncApp` serves the slash command
(``SLACK_COMMAND``, ``/trend`` by default) and the buttons of its replies, over HTTP
(``POST /slack/events``, every request's signature checked by Bolt) or Socket Mode. Every
answer is ephemeral to the caller: in the acknowledgement itself, or through the
request's ``response_url`` when the work may take longer than Slack's 3 seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import render
from bot.commands import Caller, CommandCore, split_command
from bot.errors import (
    ChatGone,
    ConfigError,
    DeliveryError,
    NotInChannel,
    PermanentError,
    RateLimited,
    TransientError,
)
from bot.i18n import t
from bot.models import ChatKind, ChatSettings, ChatState, Outgoing, Platform, Reply, Toast
from bot.settings import Settings
from bot.store import chats as chat_store
from bot.store.chats import ChatRecord
from bot.store.engine import reader

log = logging.getLogger("bot.channels.slack")

# A Web API call that has not answered in this long is abandoned (chat.postMessage answers
# in well under a second); the delivery engine retries it as a possible duplicate.
REQUEST_TIMEOUT_SECONDS = 15
# Slack waits 3 s for the acknowledgement of a slash command or a button. A reply that is
# not ready this long after the request arrived is acknowledged empty and sent through the
# response_url instead; the rest of the 3 s is margin for the network.
ACK_BUDGET_SECONDS = 2.0
# Commands that read many pages or queue work: always acknowledged at once, answered later.
SLOW_COMMANDS = frozenset({"latest", "tags", "digest"})
# users.info (for a new chat's language) is skipped when Slack is slower than this.
LOCALE_TIMEOUT_SECONDS = 1.0
# A 429 without a usable Retry-After header waits this long.
DEFAULT_RETRY_AFTER_SECONDS = 1.0
# stop() lets commands being answered finish for this long, then cancels them.
SHUTDOWN_GRACE_SECONDS = 5.0
# The action_id of every button the Slack renderer makes (``trend:{index}``, and
# ``trend:vote-{n}-up|down`` for the 👍/👎 of page n).
ACTION_ID_RE = re.compile(r"^trend:(?:\d+|vote-\d+-(?:up|down))$")
# A direct message with the bot: its channel id starts with D; Slack names it so.
DM_CHANNEL_PREFIX = "D"
DM_CHANNEL_NAME = "directmessage"

NOT_IN_CHANNEL = "not_in_channel"
# Error codes after which nothing can be posted to the conversation again. The last three
# concern the whole workspace (the app was uninstalled or its token revoked), but they
# surface on a send to one chat: each chat becomes inactive as it is next sent to, and a
# reinstalled app's chats come back with resume or subscribe.
GONE_ERRORS = frozenset(
    {
        "channel_not_found",
        "is_archived",
        "channel_is_archived",
        "user_not_found",
        "account_inactive",
        "invalid_auth",
        "token_revoked",
    }
)
_WORKSPACE_ERRORS = frozenset({"account_inactive", "invalid_auth", "token_revoked"})
# Slack failed while handling the call; part of it may have happened (a posted message).
AMBIGUOUS_ERRORS = frozenset({"fatal_error", "internal_error"})
# Slack could not take the call now; nothing happened.
UNAVAILABLE_ERRORS = frozenset({"service_unavailable", "request_timeout"})
_APP_TOKEN_REJECTED = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "account_inactive", "not_allowed_token_type"}
)

_ERRORS: tuple[type[BaseException], ...] = (SlackClientError, aiohttp.ClientError, TimeoutError)


# ---------------------------------------------------------------------------- the client


def make_client(settings: Settings) -> AsyncWebClient:
    """The one Web API client of the process, for the sender and the channel.

    Calls go to ``settings.slack_api_base_url``. The client has no retry handlers at all:
    slack-sdk would otherwise retry a dropped connection (possibly posting a message twice)
    and, given a rate-limit handler, sleep on 429s; the delivery engine owns both decisions.
    No request is made here.
    """
    if settings.slack_bot_token is None:
        raise ValueError("SLACK_BOT_TOKEN is not set")
    base_url = settings.slack_api_base_url
    if not base_url.endswith("/"):  # slack-sdk appends the method name to it
        base_url += "/"
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=base_url,
        timeout=REQUEST_TIMEOUT_SECONDS,
        retry_handlers=[],
    )


def _retry_after(headers: Mapping[str, Any] | None) -> float:
    for name, value in (headers or {}).items():
        if name.lower() != "retry-after":
            continue
        raw = value[0] if isinstance(value, list | tuple) and value else value
        try:
            seconds = float(str(raw).strip())
        except ValueError:
            break
        if seconds >= 0:
            return seconds
        break
    return DEFAULT_RETRY_AFTER_SECONDS


def translate_error(exc: BaseException) -> DeliveryError:
    """A slack-sdk or aiohttp error as the ``bot.errors`` class the delivery engine acts on.

    The reason starts with Slack's error code (``channel_not_found``, ``ratelimited``...)
    or a short label (``timeout``, ``network``, ``http_502``), the word metrics count by.

    - HTTP 429 / ``ratelimited``: :class:`RateLimited` for the ``Retry-After`` seconds.
    - ``not_in_channel``: :class:`NotInChannel` (the chat is paused with an invite hint).
    - :data:`GONE_ERRORS`: :class:`ChatGone`.
    - ``fatal_error``, ``internal_error``: ambiguous :class:`TransientError` (Slack says
      the operation may have partly succeeded); a 5xx other than 503 and a timeout too.
    - ``service_unavailable``, ``request_timeout``, 503, a refused connection: a
      :class:`TransientError` that certainly posted nothing.
    - anything else: :class:`PermanentError` (a malformed message, a missing scope).
    """
    if isinstance(exc, SlackApiError):
        response = exc.response
        status = int(getattr(response, "status_code", 0) or 0)
        data = getattr(response, "data", None)
        code = str(data.get("error") or "") if isinstance(data, dict) else ""
        if status == 429 or code == "ratelimited":
            seconds = _retry_after(getattr(response, "headers", None))
            return RateLimited(f"ratelimited: retry after {seconds:g}s", retry_after=seconds)
        if code == NOT_IN_CHANNEL:
            return NotInChannel(NOT_IN_CHANNEL)
        if code in _WORKSPACE_ERRORS:
            return ChatGone(f"{code}: the workspace no longer accepts the bot token")
        if code in GONE_ERRORS:
            return ChatGone(code)
        if code in AMBIGUOUS_ERRORS:
            return TransientError(code, ambiguous=True)
        if code in UNAVAILABLE_ERRORS:
            return TransientError(code)
        if status >= 500:
            label = f"http_{status}" + (f": {code}" if code else "")
            return TransientError(label, ambiguous=status != 503)
        return PermanentError(code or f"http_{status}")
    if isinstance(exc, TimeoutError):  # also aiohttp's ServerTimeoutError
        return TransientError("timeout: no answer from Slack", ambiguous=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return TransientError(f"network: {type(exc).__name__}")
    if isinstance(exc, aiohttp.ClientError):  # the connection broke after the request left
        return TransientError(f"network: {type(exc).__name__}", ambiguous=True)
    return PermanentError(f"error: {type(exc).__name__}")


# ---------------------------------------------------------------------------- outbound


class SlackSender:
    """Posts rendered messages to Slack conversations (satisfies ``bot.delivery.Sender``).

    Slack limits posting per channel (about one message a second), not per app, so there
    is no platform-wide cap; :meth:`interval` spaces the messages of one channel.
    """

    platform = Platform.SLACK

    def __init__(self, client: AsyncWebClient, *, per_channel_rate: float) -> None:
        self._client = client
        self._interval = 1.0 / per_channel_rate

    @property
    def rate_per_second(self) -> float | None:
        return None

    def interval(self, chat: ChatSettings) -> float:
        return self._interval

    async def send(self, chat_id: str, message: Outgoing, *, thread: str | None) -> str | None:
        """``chat.postMessage`` of one message; returns its ``ts``.

        A message marked ``in_thread`` goes into the thread of ``thread`` (the ``ts`` of the
        delivery's first message). Links and media are never unfurled; plain messages
        (broadcasts) are posted with mrkdwn off.

        Raises:
            DeliveryError: a subclass saying what to do (see :func:`translate_error`).
        """
        try:
            response = await self._client.chat_postMessage(
                channel=chat_id,
                text=message.text,
                blocks=list(message.blocks) or None,
                thread_ts=thread if message.in_thread and thread else None,
                unfurl_links=False,
                unfurl_media=False,
                mrkdwn=not message.plain,
            )
        except _ERRORS as exc:
            raise translate_error(exc) from None
        ts = response.get("ts")
        return str(ts) if ts else None


# ---------------------------------------------------------------------------- inbound


class _ChatLocks:
    """One lock per conversation while someone uses it: two taps on a tag picker must not
    both read the filter before either writes it."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: Counter[str] = Counter()

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(chat_id, asyncio.Lock())
        self._users[chat_id] += 1
        try:
            async with lock:
                yield
        finally:
            self._users[chat_id] -= 1
            if self._users[chat_id] <= 0:
                del self._users[chat_id]
                self._locks.pop(chat_id, None)


def unescape(text: str) -> str:
    """Slack's escaping of ``&``, ``<`` and ``>`` in what a user typed, undone."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def chat_kind(channel_id: str, channel_name: str | None) -> ChatKind:
    """A direct message with the bot is a personal chat; any other conversation a group."""
    if channel_id.startswith(DM_CHANNEL_PREFIX) or channel_name == DM_CHANNEL_NAME:
        return ChatKind.PRIVATE
    return ChatKind.GROUP


def needs_invite(record: ChatRecord | None) -> bool:
    """The delivery engine paused this chat because the bot is not in the channel."""
    if record is None or record.chat.state != ChatState.PAUSED:
        return False
    return (record.inactive_reason or "").split(":", 1)[0].strip() == NOT_IN_CHANNEL


class SlackChannel:
    """Slash commands and button presses -> the command core -> ephemeral replies.

    HTTP mode (``SLACK_SIGNING_SECRET``): the web server hands each ``POST /slack/events``
    to :meth:`handle_request`; Bolt verifies its signature and age (an unsigned, badly
    signed or over-5-minutes-old request gets 401 and reaches no handler). Socket Mode
    (``SLACK_APP_TOKEN``): :meth:`start` connects, and :meth:`handle_request` answers 404.

    ``/trend TEXT`` runs ``TEXT`` as a command of the chat the command was typed in: the
    channel (a group chat) or, in a direct message with the bot, the user's own chat.
    In a Slack channel anyone who can type there may change its subscription (the caller's
    ``can_manage`` is None): Slack has no cheap equivalent of a Telegram group's
    administrators, a channel's members already chose to be there, and who may use the
    app at all is the workspace's setting.

    ``latest``, ``tags`` and ``digest`` are acknowledged at once with nothing and answered
    through the ``response_url``; the other commands are answered in the acknowledgement,
    unless their reply is not ready within :data:`ACK_BUDGET_SECONDS`, when they go the
    same way. A button's value is the core's action; the reply replaces the message that
    held the button (the tag picker updates in place). When the delivery engine paused the
    chat because the bot is not a member of the channel, every reply ends with a hint to
    invite it. A failure in a handler is logged and answered with ``cmd.error``.

    Bolt's ``AsyncApp`` never calls ``auth.test`` when it is built (the synchronous
    ``App``'s ``token_verification_enabled`` has no async counterpart); it calls it on the
    first request and keeps the answer. :meth:`start` calls it too, to log who the bot is.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        core: CommandCore,
        engine: AsyncEngine,
        client: AsyncWebClient,
    ) -> None:
        self._settings = settings
        self._core = core
        self._engine = engine
        self._client = client
        self._prefix = f"{settings.slack_command} "
        self._locks = _ChatLocks()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._socket: AsyncSocketModeHandler | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._stopping = False
        self._running = False
        self._bot_name: str | None = None
        self._bot_user_id: str | None = None
        secret = settings.slack_signing_secret
        self._http_mode = secret is not None
        self.app = AsyncApp(
            name="trendbot",
            client=client,
            signing_secret=secret.get_secret_value() if secret is not None else "",
            request_verification_enabled=True,
            process_before_response=False,
        )
        self.app.command(settings.slack_command)(self._on_command)
        self.app.action(ACTION_ID_RE)(self._on_action)

    @property
    def running(self) -> bool:
        """Between :meth:`start` and :meth:`stop` (for ``/healthz``)."""
        return self._running

    @property
    def bot_name(self) -> str | None:
        """The bot user's name, known after :meth:`start` (None when auth.test failed)."""
        return self._bot_name

    # Lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Log the bot's identity (auth.test); in Socket Mode, connect.

        A failed auth.test is logged, not raised: sends report their own errors, and Bolt
        asks again on the first request. In Socket Mode the app-level token is checked
        (apps.connections.open) before the connection is opened in the background; the
        client reconnects by itself after that.

        Raises:
            ConfigError: Socket Mode, and Slack rejected ``SLACK_APP_TOKEN``.
            DeliveryError: Socket Mode, and Slack could not be reached (``TransientError``).
        """
        self._stopping = False
        try:
            identity = await self._client.auth_test()
        except _ERRORS as exc:
            log.warning(
                "slack: could not check the bot token (%s); commands will retry",
                translate_error(exc).reason,
                extra={"platform": "slack"},
            )
        else:
            self._bot_name = str(identity.get("user") or "") or None
            self._bot_user_id = str(identity.get("user_id") or "") or None
            log.info(
                "slack: connected as @%s (%s) in %s",
                self._bot_name,
                self._bot_user_id,
                identity.get("team"),
                extra={"platform": "slack"},
            )
        app_token = self._settings.slack_app_token
        if app_token is None:
            self._running = True
            return
        token = app_token.get_secret_value()
        # slack-sdk's connect retries a failed connection forever, every 10 seconds; ask for
        # a connection URL first, so that a rejected or unreachable token fails start-up.
        try:
            await self._client.apps_connections_open(app_token=token)
        except _ERRORS as exc:
            error = translate_error(exc)
            if error.reason.split(":", 1)[0] in _APP_TOKEN_REJECTED:
                raise ConfigError(
                    "SLACK_APP_TOKEN", "was rejected by Slack; check the app-level token (xapp-)"
                ) from None
            raise TransientError(f"socket mode: {error.reason}") from None
        self._socket = AsyncSocketModeHandler(self.app, token)
        # Connecting (and later reconnecting) is the client's own loop; start does not wait.
        self._connecting = asyncio.create_task(self._connect(self._socket))
        self._running = True

    async def _connect(self, socket: AsyncSocketModeHandler) -> None:
        await socket.connect_async()  # type: ignore[no-untyped-call]
        if self._socket is socket:
            log.info("slack: socket mode connected", extra={"platform": "slack"})

    async def stop(self) -> None:
        """Stop taking requests; let the commands being answered finish, briefly."""
        self._stopping = True
        self._running = False
        await self._close_socket()
        current = asyncio.current_task()
        pending = {task for task in self._tasks if task is not current and not task.done()}
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE_SECONDS)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    async def _close_socket(self) -> None:
        socket, self._socket = self._socket, None
        connecting, self._connecting = self._connecting, None
        if connecting is not None and not connecting.done():
            connecting.cancel()
            await asyncio.gather(connecting, return_exceptions=True)
        if socket is None:
            return
        try:
            await socket.close_async()  # type: ignore[no-untyped-call]
        except Exception as exc:  # closing must not fail the shutdown
            log.warning("slack: closing socket mode failed: %s", type(exc).__name__)

    async def handle_request(self, request: web.Request) -> web.StreamResponse:
        """One ``POST /slack/events`` request, answered by Bolt.

        404 in Socket Mode (no signing secret: no request could be verified); 503 while
        stopping; otherwise Bolt's answer: 401 for a request whose signature or timestamp
        does not verify, the acknowledgement of a command or button, 404 for anything no
        handler here listens to.
        """
        if not self._http_mode:
            return web.Response(status=404, text="not found")
        if self._stopping:
            return web.Response(status=503, text="stopping")
        received = time.monotonic()
        bolt_request = await to_bolt_request(request)
        bolt_request.context["trendbot_received"] = received
        bolt_response = await self.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

    # Handlers (Bolt passes arguments by name) -------------------------------------------

    async def _on_command(
        self,
        ack: AsyncAck,
        command: dict[str, Any],
        respond: AsyncRespond,
        context: Mapping[str, Any],
    ) -> None:
        self._track(asyncio.current_task())
        text = unescape(str(command.get("text") or "")).strip() or "help"
        name, _ = split_command(text)
        chat_id = str(command.get("channel_id") or "")
        caller = self._caller(
            chat_id=chat_id,
            channel_name=command.get("channel_name"),
            user_id=str(command.get("user_id") or ""),
        )

        def run(c: Caller) -> Awaitable[Reply | None]:
            return self._core.handle(c, text, prefix=self._prefix)

        work = asyncio.ensure_future(self._answer(caller, run))
        self._track(work)
        if name not in SLOW_COMMANDS:
            budget = ACK_BUDGET_SECONDS - (time.monotonic() - _received(context))
            done, _ = await asyncio.wait({work}, timeout=max(budget, 0.0))
            if done:
                reply = work.result()
                if reply is None:
                    await ack()
                else:
                    await ack(**_ephemeral(reply))
                return
        await ack()
        reply = await work
        if reply is not None:
            await self._respond(respond, reply, chat_id=chat_id)

    async def _on_action(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        respond: AsyncRespond,
    ) -> None:
        self._track(asyncio.current_task())
        await ack()
        channel = body.get("channel") or {}
        container = body.get("container") or {}
        user = body.get("user") or {}
        chat_id = str(channel.get("id") or container.get("channel_id") or "")
        value = str(action.get("value") or "")
        caller = self._caller(
            chat_id=chat_id, channel_name=channel.get("name"), user_id=str(user.get("id") or "")
        )

        toasts: list[Toast] = []

        async def run(c: Caller) -> Reply | None:
            answer = await self._core.handle_action(c, value, prefix=self._prefix)
            if isinstance(answer, Toast):  # a vote: Slack has no toast; a note to the presser
                toasts.append(answer)
                return Reply(answer.lang, answer.text)
            return answer

        failed: list[bool] = []
        reply = await self._answer(caller, run, failed=failed)
        if reply is not None:
            # A failure leaves the buttons as they were and tells the caller beside them.
            keep = bool(failed or toasts)
            await self._respond(respond, reply, chat_id=chat_id, replace_original=not keep)

    # Helpers ----------------------------------------------------------------------------

    def _track(self, task: asyncio.Task[Any] | asyncio.Future[Any] | None) -> None:
        if isinstance(task, asyncio.Task):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _caller(self, *, chat_id: str, channel_name: Any, user_id: str) -> Caller:
        name = str(channel_name) if channel_name else None
        kind = chat_kind(chat_id, name)
        return Caller(
            platform=Platform.SLACK,
            chat_id=chat_id,
            user_id=user_id,
            chat_kind=kind,
            chat_title=f"#{name}" if kind == ChatKind.GROUP and name else None,
            can_manage=None,
        )

    async def _answer(
        self,
        caller: Caller,
        run: Callable[[Caller], Awaitable[Reply | None]],
        *,
        failed: list[bool] | None = None,
    ) -> Reply | None:
        """Run a command for ``caller`` under the chat's lock; never raises."""
        lang: str = self._settings.default_language
        try:
            async with self._locks.hold(caller.chat_id):
                record = await self._record(caller.chat_id)
                if record is not None:
                    lang = record.chat.lang
                else:
                    locale = await self._user_locale(caller.user_id)
                    caller = replace(caller, language_code=locale)
                    if locale and locale.lower().startswith("ko"):
                        lang = "ko"
                reply = await run(caller)
                if reply is None:
                    return None
                after = await self._record(caller.chat_id)
                if needs_invite(after):
                    reply = replace(reply, text=f"{reply.text}\n\n{self._invite_hint(reply.lang)}")
                return reply
        except Exception as exc:
            log.exception(
                "slack: command failed: %s",
                type(exc).__name__,
                extra={"chat": f"slack:{caller.chat_id}", "platform": "slack"},
            )
            if failed is not None:
                failed.append(True)
            return Reply(lang, t(lang, "cmd.error"))

    async def _record(self, chat_id: str) -> ChatRecord | None:
        async with reader(self._engine).connect() as conn:
            return await chat_store.get(conn, platform=Platform.SLACK, chat_id=chat_id)

    async def _user_locale(self, user_id: str) -> str | None:
        """The user's Slack locale (``ko-KR``), for a new chat's language; None if unknown.

        One users.info call per new chat; it needs the ``users:read`` scope, and without it
        (or when Slack is slow) the chat simply starts in ``DEFAULT_LANGUAGE``.
        """
        if not user_id:
            return None
        try:
            async with asyncio.timeout(LOCALE_TIMEOUT_SECONDS):
                response = await self._client.users_info(user=user_id, include_locale=True)
        except _ERRORS as exc:
            log.debug("slack: no locale for a user: %s", translate_error(exc).reason)
            return None
        user = response.get("user") or {}
        locale = user.get("locale") if isinstance(user, dict) else None
        return str(locale) if locale else None

    def _invite_hint(self, lang: str) -> str:
        if self._bot_name:
            return t(lang, "slack.invite_hint", bot=self._bot_name, p=self._prefix)
        return t(lang, "slack.invite_hint_unnamed", p=self._prefix)

    async def _respond(
        self,
        respond: AsyncRespond,
        reply: Reply,
        *,
        chat_id: str,
        replace_original: bool = False,
    ) -> None:
        extra = {"chat": f"slack:{chat_id}", "platform": "slack"}
        try:
            if replace_original:
                answer = await respond(replace_original=True, **_ephemeral(reply))
            else:
                answer = await respond(**_ephemeral(reply))
        except (aiohttp.ClientError, TimeoutError, SlackClientError, ValueError) as exc:
            log.warning("slack: reply not sent: %s", type(exc).__name__, extra=extra)
            return
        status = getattr(answer, "status_code", 200)
        if status != 200:
            log.warning("slack: reply not sent: response_url answered %s", status, extra=extra)


def _received(context: Mapping[str, Any]) -> float:
    value = context.get("trendbot_received")
    return float(value) if isinstance(value, int | float) else time.monotonic()


def _message(reply: Reply) -> Outgoing:
    return render.reply_messages(Platform.SLACK, reply)[0]


def _ephemeral(reply: Reply) -> dict[str, Any]:
    message = _message(reply)
    return {"response_type": "ephemeral", "text": message.text, "blocks": list(message.blocks)}


__all__ = [
    "SlackChannel",
    "SlackSender",
    "chat_kind",
    "make_client",
    "needs_invite",
    "translate_error",
    "unescape",
]
