"""Inbound Discord: ``POST /discord/interactions`` -> the command core -> answers.

No Gateway connection: Discord posts every interaction (a slash command, a button press)
to the application's Interactions Endpoint URL, signed, and takes the HTTP answer as the
interaction's response. So any replica answers any interaction, as with Slack's HTTP mode.

Answers go within Discord's 3 seconds (https://discord.com/developers/docs/interactions/
receiving-and-responding#responding-to-an-interaction): a command's reply in the answer
itself (type 4, ephemeral: flag 64) when it is ready within ``ack_budget``; otherwise, and
at once for a ``slow`` command, a deferred answer (type 5) and the reply as the edit of
that answer through the interaction's webhook. A reply of several messages follows as
ephemeral follow-ups; a chart as an ephemeral follow-up with the picture attached, which
only the caller sees. A button press: a vote's toast as an ephemeral message, the language
toggle and the other buttons (the tag picker, a broadcast's Send and Cancel) in place of
the message they are on (type 7).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from bot import render
from bot.channels.discord import components
from bot.channels.discord.callers import (
    SEND_MESSAGES,
    SEND_MESSAGES_IN_THREADS,
    VIEW_CHANNEL,
    caller_of,
    refused_manager,
)
from bot.channels.discord.commands import definitions, same, split_invocation
from bot.channels.discord.rest import DiscordError, RestClient
from bot.channels.discord.sender import message_body
from bot.channels.discord.settings import DISCORD, DiscordSettings
from bot.channels.discord.verify import (
    MAX_BODY_BYTES,
    SIGNATURE_MAX_AGE_SECONDS,
    parse,
    public_key,
    verify_signature,
)
from bot.commands import Caller, CommandCore, refusal_key, registry
from bot.errors import ConfigError
from bot.i18n import negotiate, t
from bot.keyed import SeenKeys
from bot.logs import Refusals
from bot.models import ChatState, Outgoing, Reply, Toast, Toggled
from bot.render import charts, toggle, votes

log = logging.getLogger("bot.channels.discord")

# Discord waits 3 seconds for the answer; what is not ready sooner than this is deferred.
ACK_BUDGET_SECONDS = 2.0
# Interaction callback types (interactions/receiving-and-responding#interaction-response-
# object-interaction-callback-type).
PONG, MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE = 1, 4, 5, 6, 7
PING, COMMAND, COMPONENT = 1, 2, 3  # interaction types
# What the bot asks for when it is added to a server: to see channels, and post in them and
# in their threads (answers to commands and their charts need no permission).
INSTALL_PERMISSIONS = VIEW_CHANNEL | SEND_MESSAGES | SEND_MESSAGES_IN_THREADS
AUTHORIZE_URL = "https://discord.com/oauth2/authorize"
THREAD_TYPES = frozenset({10, 11, 12})  # announcement, public and private threads
# The reasons a chat pauses for that an interaction showing the bot may post there lifts.
PERMISSION_CODES = frozenset({"missing_access", "missing_permissions", "thread_archived"})
MAX_REMEMBERED_SIGNATURES = 10_000
SHUTDOWN_GRACE_SECONDS = 10.0
CHART_FILENAME = "chart.png"
MAX_ATTACHMENT_DESCRIPTION = 1024


def ephemeral(message: Outgoing) -> dict[str, Any]:
    """A reply's message as an interaction's data: seen by the caller alone."""
    return message_body(message, flags=components.EPHEMERAL)


class DiscordChannel:
    """Interactions -> the command core -> their answers (see the module's docstring)."""

    def __init__(
        self,
        *,
        settings: DiscordSettings,
        core: CommandCore,
        rest: RestClient,
        ack_budget: float = ACK_BUDGET_SECONDS,
    ) -> None:
        assert settings.discord_public_key and settings.discord_application_id
        self._settings = settings
        self._core = core
        self._rest = rest
        self._ack_budget = ack_budget
        self._key = public_key(settings.discord_public_key)
        self._app = settings.discord_application_id
        self._seen: SeenKeys[str] = SeenKeys(
            ttl=2 * SIGNATURE_MAX_AGE_SECONDS, limit=MAX_REMEMBERED_SIGNATURES
        )
        # A flood of refused requests is one line, then one a minute with the count.
        self._refusals = {
            401: Refusals(log, "discord: interactions refused (401)"),
            400: Refusals(log, "discord: interactions refused (400)"),
        }
        self._tasks: set[asyncio.Future[Any]] = set()
        self._running = False
        self._stopping = False

    @property
    def running(self) -> bool:
        return self._running

    # Lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Check the token (the bot's user) and register the commands where Discord's set
        differs from the registry's.

        Raises:
            ConfigError: Discord refused ``DISCORD_BOT_TOKEN`` or knows no application
                ``DISCORD_APPLICATION_ID`` of it.
        """
        self._stopping = False
        try:
            me = await self._rest.request("GET", "/users/@me")
            log.info("discord: connected as %s (%s)", me.get("username"), me.get("id"))
            await self.sync_commands()
        except DiscordError as exc:
            if exc.status == 401:
                raise ConfigError(
                    "DISCORD_BOT_TOKEN", "was refused by Discord; copy the token of the Bot page"
                ) from None
            if exc.status in (403, 404):
                raise ConfigError(
                    "DISCORD_APPLICATION_ID",
                    "names no application of this bot token (the General Information page)",
                ) from None
            log.warning("discord: could not check the token or the commands: %s", exc)
        self._running = True

    async def sync_commands(self) -> bool:
        """Register the registry's commands (a bulk overwrite) unless Discord has them.

        Returns:
            Whether they were written.
        """
        path = f"/applications/{self._app}/commands"
        wanted = definitions()
        registered = await self._rest.request("GET", path, params={"with_localizations": "true"})
        if isinstance(registered, list) and same(registered, wanted):
            return False
        await self._rest.request("PUT", path, body=wanted)
        log.info("discord: registered %d application commands", len(wanted))
        return True

    async def stop(self) -> None:
        self._stopping = True
        self._running = False
        pending = {task for task in self._tasks if not task.done()}
        if pending:
            _, late = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE_SECONDS)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    def _track(self, task: asyncio.Future[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # The endpoint -----------------------------------------------------------------------

    async def handle_install(self, _request: web.Request) -> web.StreamResponse:
        """``GET /discord/install``: to Discord's page that adds the bot to a server."""
        query = urlencode(
            {
                "client_id": self._app,
                "scope": "bot applications.commands",
                "permissions": str(INSTALL_PERMISSIONS),
                "integration_type": "0",
            }
        )
        raise web.HTTPFound(f"{AUTHORIZE_URL}?{query}")

    async def handle_request(self, request: web.Request) -> web.StreamResponse:
        """One ``POST /discord/interactions``.

        400 for a body over ``MAX_BODY_BYTES`` (never read past the bound, so before its
        signature can be checked); 401 for a request without Discord's valid signature, one
        whose timestamp is not within ``SIGNATURE_MAX_AGE_SECONDS``, or one seen before (a
        replay), whatever its body; 400 for a signed body that is no interaction (not JSON,
        nested too deeply, fields of the wrong types); 503 while stopping. Nothing is
        changed before the signature is checked. Refusals are logged as
        :class:`bot.logs.Refusals` count them: a flood is a line a minute.
        """
        if self._stopping:
            return web.Response(status=503, text="stopping")
        received = time.monotonic()
        if (request.content_length or 0) > MAX_BODY_BYTES:
            return self._refused(400, "too large")
        body = bytearray()
        async for chunk in request.content.iter_chunked(64 * 1024):
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return self._refused(400, "too large")
        signature = request.headers.get("X-Signature-Ed25519")
        refused = verify_signature(
            self._key,
            body=bytes(body),
            timestamp=request.headers.get("X-Signature-Timestamp"),
            signature=signature,
            now=time.time(),
        )
        if refused is None and not self._seen.add(str(signature), now=time.time()):
            refused = "replayed"
        if refused is not None:
            return self._refused(401, refused)
        interaction, malformed = parse(bytes(body))
        if interaction is None:
            return self._refused(400, malformed or "malformed")
        kind = interaction["type"]
        if kind == PING:
            return web.json_response({"type": PONG})
        try:
            if kind == COMMAND:
                return await self._command(request, interaction, received)
            if kind == COMPONENT:
                return await self._component(request, interaction, received)
        except Exception:  # a bug must not answer 500 to Discord; the caller is told
            log.exception("discord: an interaction failed")
            lang = negotiate(interaction.get("locale"), default=self._settings.default_language)
            return web.json_response(
                {"type": MESSAGE, "data": {"content": t(lang, "cmd.error"), "flags": 64}}
            )
        return self._refused(400, "an interaction type the bot does not answer")

    def _refused(self, status: int, why: str) -> web.Response:
        self._refusals[status].refused(why, extra={"platform": "discord"})
        return web.Response(status=status, text="unauthorized" if status == 401 else "bad request")

    # Commands ---------------------------------------------------------------------------

    async def _command(
        self, request: web.Request, interaction: dict[str, Any], received: float
    ) -> web.StreamResponse:
        caller = caller_of(interaction)
        text = split_invocation(interaction["data"])
        lang = negotiate(caller.language_code, default=self._settings.default_language)
        declared = registry.find(text.split(" ", 1)[0].lower())
        if refused_manager(declared, caller, interaction):
            self._track(asyncio.ensure_future(self._resumed(interaction, caller)))
            shown = await self._chat_lang(caller, default=lang, received=received)
            key = refusal_key(caller, declared.group_refusal)  # type: ignore[union-attr]
            refusal = Outgoing(text=t(shown, key, p="/"), plain=True)
            return web.json_response({"type": MESSAGE, "data": ephemeral(refusal)})
        # Everything the database is asked is within the answer's 3 s: past them, deferred.
        work = asyncio.ensure_future(self._handled(interaction, caller, text))
        self._track(work)
        token = str(interaction["token"])
        if declared is None or not declared.slow:
            budget = self._ack_budget - (time.monotonic() - received)
            done, _ = await asyncio.wait({work}, timeout=max(budget, 0.0))
            if done:
                reply = _reply_of(work, lang)
                messages = render.reply_messages(DISCORD, reply)
                answer = {"type": MESSAGE, "data": ephemeral(messages[0])}
                rest = messages[1:]
                if not rest and reply.chart is None:
                    return web.json_response(answer)
                return await self._answer_then(
                    request, answer, self._follow(token, rest, chart=reply)
                )
        deferred = {"type": DEFERRED_MESSAGE, "data": {"flags": components.EPHEMERAL}}
        return await self._answer_then(request, deferred, self._deferred(token, work, lang))

    async def _handled(self, interaction: dict[str, Any], caller: Caller, text: str) -> Reply:
        """The command's reply, once a chat paused for the bot's permissions that this
        interaction shows it may post in again is active."""
        await self._resumed(interaction, caller)
        return await self._core.handle(caller, text, prefix="/")

    async def _resumed(self, interaction: dict[str, Any], caller: Caller) -> None:
        """:meth:`_reachable`, whose failure is logged and keeps no answer from its caller."""
        try:
            await self._reachable(interaction, caller)
        except Exception:
            log.warning("discord: could not check whether a paused chat may resume", exc_info=True)

    async def _chat_lang(self, caller: Caller, *, default: str, received: float) -> str:
        """The chat's language for an answer given at once: the caller's where the database
        does not answer within half the answer's time."""
        budget = self._ack_budget / 2 - (time.monotonic() - received)
        try:
            status = await asyncio.wait_for(
                self._core.chat_status(platform=DISCORD, chat_id=caller.chat_id),
                timeout=max(budget, 0.0),
            )
        except Exception:  # slow or away: the caller's language will do
            return default
        return status.lang if status is not None else default

    async def _deferred(self, token: str, work: asyncio.Future[Reply], lang: str) -> None:
        reply = await _awaited_reply(work, lang)
        messages = render.reply_messages(DISCORD, reply)
        await self._webhook("PATCH", token, ephemeral(messages[0]), original=True)
        await self._follow(token, messages[1:], chart=reply)

    async def _follow(self, token: str, messages: list[Outgoing], *, chart: Reply) -> None:
        for message in messages:
            await self._webhook("POST", token, ephemeral(message))
        if chart.chart is None:
            return
        png = await charts.picture(chart.chart)
        if png is None:
            return
        alt = chart.chart.alt[:MAX_ATTACHMENT_DESCRIPTION]
        body = {
            "flags": components.EPHEMERAL,
            "attachments": [{"id": "0", "filename": CHART_FILENAME, "description": alt}],
            "allowed_mentions": {"parse": []},
        }
        files = {"files[0]": (CHART_FILENAME, png, "image/png")}
        await self._webhook("POST", token, body, files=files)

    async def _webhook(
        self,
        method: str,
        token: str,
        body: dict[str, Any],
        *,
        original: bool = False,
        files: dict[str, tuple[str, bytes, str]] | None = None,
    ) -> None:
        """A follow-up (or the edit of the answer) through the interaction's webhook; a
        failure is logged, with Discord's detail, never raised."""
        path = f"/webhooks/{self._app}/{token}" + ("/messages/@original" if original else "")
        try:
            await self._rest.request(method, path, body=body, files=files, bot=False)
        except DiscordError as exc:
            log.warning("discord: a follow-up was refused: %s", exc)

    async def _answer_then(
        self, request: web.Request, answer: dict[str, Any], then: Awaitable[None]
    ) -> web.StreamResponse:
        """Answer the interaction, and once the answer is written, do ``then`` (follow-ups
        need the interaction answered first)."""
        response = web.json_response(answer)
        await response.prepare(request)
        await response.write_eof()
        self._track(asyncio.ensure_future(then))
        return response

    async def _reachable(self, interaction: dict[str, Any], caller: Caller) -> None:
        """A chat paused because the bot could not post there is active again when an
        interaction shows it may (``app_permissions``: the bot's in that channel)."""
        try:
            permissions = int(interaction.get("app_permissions") or 0)
        except ValueError:
            return
        channel = interaction.get("channel")
        kind = channel.get("type") if isinstance(channel, dict) else None
        needed = VIEW_CHANNEL | (
            SEND_MESSAGES_IN_THREADS if kind in THREAD_TYPES else SEND_MESSAGES
        )
        if permissions & needed != needed:
            return
        status = await self._core.chat_status(platform=DISCORD, chat_id=caller.chat_id)
        if status is None or status.state != ChatState.PAUSED:
            return
        await self._core.chat_reachable(
            platform=DISCORD,
            chat_id=caller.chat_id,
            codes=PERMISSION_CODES,
            states=frozenset({ChatState.PAUSED}),
        )

    # Buttons ----------------------------------------------------------------------------

    async def _component(
        self, request: web.Request, interaction: dict[str, Any], received: float
    ) -> web.StreamResponse:
        caller = caller_of(interaction)
        action = str(interaction["data"]["custom_id"])
        token = str(interaction["token"])
        lang = negotiate(caller.language_code, default=self._settings.default_language)
        # The toggle changes the message everyone sees for who may manage the channel (as
        # a group's administrators on Telegram); anyone else gets their own copy.
        shared = caller.can_manage is None or await caller.can_manage()
        if action.startswith(toggle.TOGGLE):
            work: asyncio.Future[Any] = asyncio.ensure_future(
                self._core.toggle_language(caller, action)
            )
        else:
            work = asyncio.ensure_future(self._core.handle_action(caller, action, prefix="/"))
        self._track(work)
        budget = self._ack_budget - (time.monotonic() - received)
        done, _ = await asyncio.wait({work}, timeout=max(budget, 0.0))
        if not done:
            later = self._pressed_later(token, work, action=action, lang=lang, shared=shared)
            return await self._answer_then(request, {"type": DEFERRED_UPDATE}, later)
        answer, more = self._pressed(work, action=action, lang=lang, shared=shared)
        if not more:
            return web.json_response(answer)
        return await self._answer_then(request, answer, self._post_all(token, more))

    def _pressed(
        self, work: asyncio.Future[Any], *, action: str, lang: str, shared: bool
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The answer to a press, and the bodies of the messages that follow it (a toggled
        digest of several messages). A toggle pressed by who may manage the channel
        (``shared``) edits the message in place, or posts the other language's messages
        where it has several (as Telegram does); pressed by anyone else, the digest in the
        other language is theirs alone (ephemeral, as on Slack), the channel unchanged."""
        try:
            result = work.result()
        except Exception:
            log.exception("discord: a button press failed")
            result = Reply(lang, t(lang, "cmd.error"))
        if result is None:
            return {"type": DEFERRED_UPDATE}, []
        if isinstance(result, Toast):
            return {"type": MESSAGE, "data": ephemeral(Outgoing(text=result.text, plain=True))}, []
        if isinstance(result, Toggled):
            back = toggle.back(result.digest, result.row_id)
            parts = toggle.with_toggle(
                DISCORD, render.digest_messages(DISCORD, result.digest), back
            )
            if not shared:
                first, *rest = [ephemeral(part) for part in parts]
                return {"type": MESSAGE, "data": first}, rest
            if len(parts) == 1:
                return {"type": UPDATE, "data": message_body(parts[0])}, []
            return {"type": DEFERRED_UPDATE}, [message_body(part) for part in parts]
        messages = render.reply_messages(DISCORD, result)
        if action.startswith((votes.VOTE, toggle.TOGGLE)):  # a refusal: to the presser alone
            return {"type": MESSAGE, "data": ephemeral(messages[0])}, []
        return {"type": UPDATE, "data": message_body(messages[0])}, []

    async def _pressed_later(
        self, token: str, work: asyncio.Future[Any], *, action: str, lang: str, shared: bool
    ) -> None:
        await asyncio.wait({work})
        answer, more = self._pressed(work, action=action, lang=lang, shared=shared)
        data = answer.get("data")
        if answer["type"] == UPDATE and isinstance(data, dict):
            await self._webhook("PATCH", token, data, original=True)
        elif answer["type"] == MESSAGE and isinstance(data, dict):
            await self._webhook("POST", token, data)
        await self._post_all(token, more)

    async def _post_all(self, token: str, bodies: list[dict[str, Any]]) -> None:
        for body in bodies:
            await self._webhook("POST", token, body)


def _reply_of(work: asyncio.Future[Reply], lang: str) -> Reply:
    try:
        return work.result()
    except Exception:
        log.exception("discord: a command failed")
        return Reply(lang, t(lang, "cmd.error"))


async def _awaited_reply(work: asyncio.Future[Reply], lang: str) -> Reply:
    await asyncio.wait({work})
    return _reply_of(work, lang)


__all__ = ["DiscordChannel", "caller_of"]
