"""Inbound Slack: the slash command through Bolt, over HTTP or Socket Mode, and the
channel's lifecycle."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from bot.channels.slack.blocks import LINK_ACTION_ID
from bot.channels.slack.client import (
    ACK_BUDGET_SECONDS,
    ACTION_ID_RE,
    APP_TOKEN_REJECTED,
    BOT_SCOPES,
    CALL_ERRORS,
    EVENT_RETRY_WINDOW_SECONDS,
    MAX_OAUTH_QUERY_CHARS,
    MAX_REMEMBERED_CONVERSATIONS,
    MAX_REMEMBERED_EVENTS,
    MAX_REMEMBERED_REQUESTS,
    NOT_INSTALLED_LOG_SECONDS,
    SHUTDOWN_GRACE_SECONDS,
    SIGNATURE_MAX_AGE_SECONDS,
    SlackAuth,
    log,
    translate_error,
)
from bot.channels.slack.conversations import Conversation, Where, ephemeral, received_at, unescape
from bot.channels.slack.handlers import EventHandlers
from bot.channels.slack.settings import SlackSettings
from bot.channels.slack.verify import malformed_body, refuse_unreadable, verify_signature
from bot.commands import Caller, CommandCore, registry, split_command
from bot.delivery.pacing import Pacing
from bot.delivery.replies import Replies
from bot.errors import (
    ConfigError,
    PlatformAuthFailed,
    TransientError,
)
from bot.i18n import LANGUAGES, t
from bot.keyed import KeyedLocks, SeenKeys
from bot.logs import Refusals
from bot.models import (
    Platform,
    Reply,
)

if TYPE_CHECKING:
    from bot.channels.slack.install import StateStore
    from bot.channels.slack.oauth import Workspaces

# ---------------------------------------------------------------------------- inbound


class SlackChannel(EventHandlers):
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
    unless their reply is not ready within ``ack_budget`` seconds, when they go the
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
        settings: SlackSettings,
        core: CommandCore,
        client: AsyncWebClient,
        auth: SlackAuth | None = None,
        workspaces: Workspaces | None = None,
        state_store: StateStore | None = None,
        ack_budget: float = ACK_BUDGET_SECONDS,
        pacing: Pacing | None = None,
    ) -> None:
        self._settings = settings
        self._ack_budget = ack_budget
        # Replies that follow the acknowledgement share the sender's pacing when given it.
        self._replies = Replies(
            pacing or Pacing(settings.slack_workspace_rate_per_second),
            platform=Platform.SLACK.value,
        )
        self._reply_interval = 1.0 / settings.slack_rate_per_second
        self.auth = auth or SlackAuth(client)
        self._workspaces = workspaces
        # Workspaces (pace_key; "" for the one of a bot token) that refused a message's
        # blocks and took its fallback blocks: they get the fallback blocks from then on.
        self.fallback_workspaces: set[str] = set()
        self._core = core
        self._client = client
        self._prefix = f"{settings.slack_command} "
        self._locks: KeyedLocks[str] = KeyedLocks()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._socket: AsyncSocketModeHandler | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._stopping = False
        self._running = False
        self._bot_name: str | None = None
        self._bot_user_id: str | None = None
        self._requests: SeenKeys[str] = SeenKeys(
            ttl=SIGNATURE_MAX_AGE_SECONDS, limit=MAX_REMEMBERED_REQUESTS
        )
        self._refused = Refusals(log, "slack: requests refused (401)")
        self._events: SeenKeys[str] = SeenKeys(
            ttl=EVENT_RETRY_WINDOW_SECONDS, limit=MAX_REMEMBERED_EVENTS
        )
        self._conversations: OrderedDict[str, Conversation] = OrderedDict()
        self._scope_warned: set[str] = set()
        # Workspaces without the app whose requests were logged within the hour (INFO).
        self._not_installed_seen: SeenKeys[str] = SeenKeys(
            ttl=NOT_INSTALLED_LOG_SECONDS, limit=MAX_REMEMBERED_CONVERSATIONS
        )
        secret = settings.slack_signing_secret
        self._http_mode = secret is not None
        if workspaces is not None:
            assert state_store is not None
            self.app = self._oauth_app(client, workspaces=workspaces, state_store=state_store)
        else:
            self.app = AsyncApp(
                name="trendbot",
                client=client,
                signing_secret=secret.get_secret_value() if secret is not None else "",
                request_verification_enabled=True,
                process_before_response=False,
            )
        self.app.middleware(self._once_per_event)
        self.app.command(settings.slack_command)(self._on_command)
        self.app.action(ACTION_ID_RE)(self._on_action)
        self.app.action(LINK_ACTION_ID)(_acknowledge)
        self.app.event("app_uninstalled")(self._on_uninstalled)
        self.app.event("tokens_revoked")(self._on_tokens_revoked)
        self.app.event("member_joined_channel")(self._on_member_joined)
        self.app.event("app_home_opened")(self._on_home_opened)
        for name in ("channel_archive", "group_archive"):
            self.app.event(name)(self._on_archived)
        for name in ("channel_deleted", "group_deleted"):
            self.app.event(name)(self._on_deleted)
        for name in ("channel_unarchive", "group_unarchive"):
            self.app.event(name)(self._on_unarchived)

    def _oauth_app(
        self, client: AsyncWebClient, *, workspaces: Workspaces, state_store: StateStore
    ) -> AsyncApp:
        """Bolt's app for many workspaces: each request authorized with its workspace's
        installation, the install pages served by
        :class:`~bot.channels.slack.install.InstallFlow`."""
        from bot.channels.slack import install as slack_install
        from bot.channels.slack import oauth as slack_oauth

        settings = self._settings
        secret = settings.slack_signing_secret
        assert secret is not None  # required with SLACK_CLIENT_ID
        redirect = (
            f"{settings.public_base_url}{slack_oauth.REDIRECT_PATH}"
            if settings.public_base_url
            else None
        )
        oauth = slack_install.oauth_settings(
            workspaces=workspaces,
            state_store=state_store,
            scopes=sorted(BOT_SCOPES),
            redirect_uri=redirect,
            default_lang=settings.default_language,
        )
        flow = slack_install.InstallFlow(
            settings=oauth, client=client, default_lang=settings.default_language
        )
        not_installed = "\n".join(t(lang, "slack.oauth.not_installed") for lang in LANGUAGES)
        return AsyncApp(
            name="trendbot",
            client=client,
            signing_secret=secret.get_secret_value(),
            oauth_flow=flow,
            request_verification_enabled=True,
            process_before_response=False,
            before_authorize=self._reachable,
            user_facing_authorize_error_message=not_installed,
        )

    async def handle_install(self, request: web.Request) -> web.StreamResponse:
        """``GET /slack/install`` (the "Add to Slack" page, with a new state) and
        ``GET /slack/oauth_redirect`` (Slack's answer: the state checked and used up, the
        code exchanged for the workspace's token). 404 without ``SLACK_CLIENT_ID``; a page
        saying what went wrong, never a traceback."""
        flow = self.app.oauth_flow
        if flow is None:
            return web.Response(status=404, text="not found")
        if self._stopping:
            return web.Response(status=503, text="stopping")
        if len(request.query_string) > MAX_OAUTH_QUERY_CHARS:
            return web.Response(status=400, text="query too long")
        bolt_request = AsyncBoltRequest(
            body="",
            query=request.query_string,
            headers=request.headers,  # type: ignore[arg-type]
        )
        try:
            if request.path == flow.redirect_uri_path:
                response = await flow.handle_callback(bolt_request)
            else:
                response = await flow.handle_installation(bolt_request)
        except Exception as exc:  # Slack did not answer, or the store failed: never a 500
            from bot.channels.slack.install import failure_page, page_lang

            log.warning(
                "slack: an install did not complete: %s",
                translate_error(exc).reason,
                extra={"platform": "slack"},
            )
            lang = page_lang(bolt_request, self._settings.default_language)
            return web.Response(
                status=503, text=failure_page(lang), content_type="text/html", charset="utf-8"
            )
        return await to_aiohttp_response(response)

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
        """Check the bot token and log the bot's identity (auth.test); in Socket Mode, connect.

        An auth.test that Slack could not answer is logged, not raised: sends report their
        own errors, and Bolt asks again on the first request. In Socket Mode the app-level
        token is checked (apps.connections.open) before the connection is opened in the
        background; the client reconnects by itself after that.

        Raises:
            ConfigError: Slack refused ``SLACK_BOT_TOKEN``, or in Socket Mode
                ``SLACK_APP_TOKEN``.
            DeliveryError: Socket Mode, and Slack could not be reached (``TransientError``).
        """
        self._stopping = False
        if self.oauth:  # no token of its own; each workspace's is checked as it is used
            assert self._workspaces is not None
            self._running = True
            log.info("slack: serving the workspaces that installed the app (OAuth)")
            # The stored tokens move to the first key of SLACK_TOKEN_KEY in the background:
            # start-up and /healthz do not wait for it.
            self._track(asyncio.create_task(self._workspaces.rotate_keys()))
            return
        try:
            identity = await self._client.auth_test()
        except CALL_ERRORS as exc:
            refused = translate_error(exc)
            if isinstance(refused, PlatformAuthFailed):
                raise ConfigError(
                    "SLACK_BOT_TOKEN",
                    f"was refused by Slack ({refused.code}); check the Bot User OAuth Token "
                    "(xoxb-) of the installed app",
                ) from None
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
        except CALL_ERRORS as exc:
            error = translate_error(exc)
            if error.reason.split(":", 1)[0] in APP_TOKEN_REJECTED:
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
        await self.auth.close()
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
        """One ``POST /slack/events`` request, answered by Bolt once it is known to be Slack's.

        404 in Socket Mode (no signing secret: no request could be verified); 503 while
        stopping. The signature is checked on the raw body before anything parses it: 401
        for an unsigned, badly signed or stale request, whatever its body; 400 for a signed
        body that is not UTF-8 or whose JSON is not an object or nests too deeply; each with
        one WARNING line. A signed request seen before (a replay within its five minutes) is
        answered 200 and not acted on again; the signatures are remembered in this process
        only. Otherwise Bolt's answer: the acknowledgement of a command, button or event, the
        challenge of a url_verification, 404 for anything no handler here listens to.
        """
        if not self._http_mode:
            return web.Response(status=404, text="not found")
        if self._stopping:
            return web.Response(status=503, text="stopping")
        received = time.monotonic()
        body = await request.read()
        secret = self._settings.slack_signing_secret
        assert secret is not None  # HTTP mode
        signature = request.headers.get("X-Slack-Signature")
        refused = verify_signature(
            secret.get_secret_value(),
            body=body,
            timestamp=request.headers.get("X-Slack-Request-Timestamp"),
            signature=signature,
            now=time.time(),
        )
        if refused is not None:
            self._refused.refused(refused, extra={"platform": "slack"})
            return web.Response(status=401, text="unauthorized")
        malformed = malformed_body(body, request.headers.get("Content-Type"))
        if malformed is not None:
            log.warning(
                "slack: signed request refused (400): %s", malformed, extra={"platform": "slack"}
            )
            return web.Response(status=400, text="malformed request")
        assert signature is not None  # verified
        if not self._requests.add(signature, now=time.time()):
            log.info("slack: a request seen before was answered, not acted on again")
            return web.Response(status=200)
        # Bolt reads the fields it routes on without checking their types: a signed body of
        # a shape Slack never sends (an event that is a string, a channel that is a number)
        # raises while the request is built, or makes the dispatch answer 500. Listeners run
        # after the acknowledgement, so a 5xx here always means such a body: malformed.
        try:
            bolt_request = AsyncBoltRequest(
                body=body.decode("utf-8"),
                query=request.query_string,
                headers=request.headers,  # type: ignore[arg-type]
            )
        except Exception as exc:
            return refuse_unreadable(type(exc).__name__)
        bolt_request.context["trendbot_received"] = received
        bolt_response = await self.app.async_dispatch(bolt_request)
        if bolt_response.status >= 500:
            return refuse_unreadable(f"status {bolt_response.status}")
        return await to_aiohttp_response(bolt_response)

    # Handlers (Bolt passes arguments by name) -------------------------------------------

    async def _on_command(
        self,
        ack: AsyncAck,
        command: dict[str, Any],
        respond: AsyncRespond,
        context: Mapping[str, Any],
        client: AsyncWebClient,
    ) -> None:
        self._enter(context, client)  # and tracks this handler's task
        text = unescape(str(command.get("text") or "")).strip() or "help"
        name, _ = split_command(text)
        user_id = str(command.get("user_id") or "")
        channel_name = command.get("channel_name")
        conversation, refusal = await self._where_from(
            channel_id=str(command.get("channel_id") or ""),
            channel_name=channel_name,
            user_id=user_id,
        )
        if refusal is not None and not (conversation.where == Where.INVITE and name == "subscribe"):
            await ack(**ephemeral(refusal))
            return
        chat_id = conversation.chat_id
        if refusal is not None:  # a channel all the same: its chat is the channel's
            conversation = replace(conversation, where=Where.CHANNEL)
        caller = await self._caller(conversation, channel_name=channel_name, user_id=user_id)
        if refusal is not None:  # remembered until the app is invited
            await ack()
            reply = (await self._answer(caller, self._until_invited(text))).reply
            if reply is not None:
                await self._respond(respond, reply, chat_id=chat_id)
            return

        def run(c: Caller) -> Awaitable[Reply | None]:
            return self._core.handle(c, text, prefix=self._prefix)

        work = asyncio.ensure_future(self._answer(caller, run))
        self._track(work)
        # A command that reads many pages or queues work (``slow`` in its declaration) is
        # always acknowledged at once and answered later.
        declared = registry.find(name)
        if declared is None or not declared.slow:
            budget = self._ack_budget - (time.monotonic() - received_at(context))
            done, _ = await asyncio.wait({work}, timeout=max(budget, 0.0))
            if done:
                reply = work.result().reply
                if reply is None:
                    await ack()
                else:
                    await ack(**ephemeral(reply))
                    await self._send_chart(
                        reply, conversation, channel_id=command.get("channel_id")
                    )
                return
        await ack()
        reply = (await work).reply
        if reply is not None:
            await self._respond(respond, reply, chat_id=chat_id)
            await self._send_chart(reply, conversation, channel_id=command.get("channel_id"))

    # Events -----------------------------------------------------------------------------

    # Helpers ----------------------------------------------------------------------------


__all__ = ["SlackChannel"]


async def _acknowledge(ack: Any) -> None:
    """A link button's press: the browser opens its page; Slack waits for the ack alone."""
    await ack()
