"""The Slack channel's button presses and workspace events: votes, the language toggle,
an uninstall or revoked tokens, the bot invited to a channel, a channel archived or deleted."""

from __future__ import annotations

import datetime as dt
import functools
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.channels.slack.client import (
    ARCHIVED_REASON,
    AWAITING_INVITE,
    AWAITING_INVITE_DAYS,
    CALL_ERRORS,
    DELETED_REASON,
    INVITE_CODES,
    REFUSED_BLOCKS,
    error_code,
    log,
    translate_error,
)
from bot.channels.slack.conversations import ChannelBase, log_extra
from bot.channels.slack.payload import payload
from bot.commands import Caller
from bot.i18n import LANGUAGES, t
from bot.models import (
    ChatState,
    Platform,
    Reply,
    Toast,
    Toggled,
)
from bot.render import toggle
from bot.util import utcnow

# views.publish: a view holds at most 100 blocks (https://api.slack.com/reference/surfaces/views).
MAX_VIEW_BLOCKS = 100


class EventHandlers(ChannelBase):
    """Buttons and events of :class:`~bot.channels.slack.channel.SlackChannel`."""

    async def _on_action(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        respond: AsyncRespond,
        context: Mapping[str, Any],
        client: AsyncWebClient,
    ) -> None:
        self._enter(context, client)  # and tracks this handler's task
        await ack()
        channel = body.get("channel") or {}
        container = body.get("container") or {}
        user = body.get("user") or {}
        user_id = str(user.get("id") or "")
        conversation, refusal = await self._where_from(
            channel_id=str(channel.get("id") or container.get("channel_id") or ""),
            channel_name=channel.get("name"),
            user_id=user_id,
        )
        if refusal is not None:
            await self._respond(respond, refusal, chat_id=conversation.chat_id)
            return
        value = str(action.get("value") or "")
        caller = await self._caller(conversation, channel_name=channel.get("name"), user_id=user_id)
        if value.startswith(toggle.TOGGLE):
            channel_id = str(channel.get("id") or container.get("channel_id") or "")
            await self._on_toggle(caller, value, channel_id=channel_id, respond=respond)
            return

        toasts: list[Toast] = []

        async def run(c: Caller) -> Reply | None:
            answer = await self._core.handle_action(c, value, prefix=self._prefix)
            if isinstance(answer, Toast):  # a vote: Slack has no toast; a note to the presser
                toasts.append(answer)
                return Reply(answer.lang, answer.text)
            return answer

        answer = await self._answer(caller, run)
        if answer.reply is not None:
            # A failure leaves the buttons as they were and tells the caller beside them.
            keep = answer.failed or bool(toasts)
            await self._respond(
                respond, answer.reply, chat_id=conversation.chat_id, replace_original=not keep
            )

    async def _on_toggle(
        self, caller: Caller, value: str, *, channel_id: str, respond: AsyncRespond
    ) -> None:
        """The language toggle: the digest in the other language for the one who pressed
        only (``chat.postEphemeral``, https://api.slack.com/methods/chat.postEphemeral):
        the others in the channel keep theirs. Where Slack refuses the container blocks,
        the same messages in sections."""
        toggled: list[Toggled] = []

        async def run(c: Caller) -> Reply | None:
            answer = await self._core.toggle_language(c, value)
            if isinstance(answer, Reply):
                return answer
            toggled.append(answer)
            return None

        answer = await self._answer(caller, run)
        if answer.reply is not None or not toggled:
            if answer.reply is not None:
                await self._respond(respond, answer.reply, chat_id=caller.chat_id)
            return
        done = toggled[0]
        back = toggle.back(done.digest, done.row_id)
        parts = toggle.with_toggle(
            Platform.SLACK, render.digest_messages(Platform.SLACK, done.digest), back
        )
        client = self._api()
        for part in parts:
            post = functools.partial(
                client.chat_postEphemeral, channel=channel_id, user=caller.user_id, text=part.text
            )
            try:
                try:
                    await post(blocks=payload(part).blocks)
                except SlackApiError as exc:
                    if not payload(part).fallback_blocks or error_code(exc) != REFUSED_BLOCKS:
                        raise
                    await post(blocks=payload(part).fallback_blocks)
            except CALL_ERRORS as exc:
                log.warning(
                    "slack: could not post a toggled digest: %s",
                    translate_error(exc).reason,
                    extra={"chat": f"slack:{caller.chat_id}", "platform": "slack"},
                )
                return

    async def _once_per_event(
        self, body: dict[str, Any], next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        """Bolt middleware: an Events API event is acted on once, however often Slack
        delivers it (a retry, ``X-Slack-Retry-Num``, carries the same ``event_id``); over
        HTTP and Socket Mode alike."""
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        seen = isinstance(event_id, str) and not self._events.add(event_id, now=time.monotonic())
        if seen:
            log.info("slack: an event delivered again was acted on once")
            return BoltResponse(status=200, body="")
        await next()
        return None

    async def _on_uninstalled(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/app_uninstalled: the token no longer works. Installed
        by OAuth: that workspace's tokens are deleted and its chats inactive; the other
        workspaces go on."""
        if self.oauth:
            await self._removed(context, reason="app_uninstalled")
            return
        self.auth.refused("app_uninstalled")

    async def _on_tokens_revoked(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/tokens_revoked: stops Slack (or, installed by OAuth,
        that workspace) when a bot token is among them (the app uses no user token)."""
        tokens = event.get("tokens") if isinstance(event.get("tokens"), dict) else {}
        if not (tokens and tokens.get("bot")):
            return
        if self.oauth:
            await self._removed(context, reason="tokens_revoked")
            return
        self.auth.refused("tokens_revoked")

    async def _removed(self, context: Mapping[str, Any], *, reason: str) -> None:
        assert self._workspaces is not None
        team = str(context.get("team_id") or "") or None
        enterprise = str(context.get("enterprise_id") or "") or None
        if context.get("is_enterprise_install"):
            team = None
        if team is None and enterprise is None:
            return
        stopped = await self._workspaces.remove(
            enterprise_id=enterprise, team_id=team, reason=reason
        )
        self._conversations.clear()
        log.info(
            "slack: %s in %s: its tokens are deleted, %d chats inactive",
            reason,
            team or enterprise,
            stopped,
            extra={"platform": "slack"},
        )

    def _until_invited(self, text: str) -> Callable[[Caller], Awaitable[Reply | None]]:
        """A ``subscribe`` in a private channel the app is not a member of: the chat takes
        it and waits, inactive, for the app's invitation (:meth:`_on_member_joined`)."""

        async def run(caller: Caller) -> Reply | None:
            reply = await self._core.handle(caller, text, prefix=self._prefix)
            status = await self._status(caller.chat_id)
            if reply is None or status is None:  # nothing was taken: nothing to remember
                return reply
            await self._core.chat_gone(
                platform=Platform.SLACK,
                chat_id=caller.chat_id,
                reason=AWAITING_INVITE,
                code=AWAITING_INVITE,
            )
            key = (
                "slack.starts_when_invited"
                if self._bot_name
                else "slack.starts_when_invited_unnamed"
            )
            note = t(reply.lang, key, bot=self._bot_name or "", days=AWAITING_INVITE_DAYS)
            return replace(reply, text=f"{reply.text}\n\n{note}")

        return run

    async def _on_member_joined(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/member_joined_channel: when the bot itself joined, a
        chat of the channel that waited for an invite becomes active (from now on)."""
        self._enter(context, None)
        bot_user = context.get("bot_user_id") if self.oauth else None
        bot_user = bot_user or self._bot_user_id or context.get("bot_user_id")
        channel = self._address(str(event.get("channel") or ""))
        if not channel or not bot_user or event.get("user") != bot_user:
            return
        # A chat paused by its members, or gone for another reason, stays as it is.
        if await self._core.chat_reachable(
            platform=Platform.SLACK, chat_id=channel, codes=INVITE_CODES
        ):
            log.info("slack: invited to the channel; deliveries resume", extra=log_extra(channel))
        elif await self._core.chat_reachable(
            platform=Platform.SLACK,
            chat_id=channel,
            codes=frozenset({AWAITING_INVITE}),
            since=utcnow() - dt.timedelta(days=AWAITING_INVITE_DAYS),
        ):
            log.info(
                "slack: invited to the channel; its subscription starts", extra=log_extra(channel)
            )

    async def _on_home_opened(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/app_home_opened: the Home tab shows the settings of
        the user's DM with the app, as ``settings`` there answers them, with the button to
        the settings page (https://api.slack.com/methods/views.publish)."""
        self._enter(context, None)
        user_id = str(event.get("user") or "")
        channel_id = str(event.get("channel") or "")
        if event.get("tab") != "home" or not user_id or not channel_id:
            return
        conversation, refusal = await self._where_from(
            channel_id=channel_id, channel_name=None, user_id=user_id
        )
        if refusal is not None:
            return
        caller = await self._caller(conversation, channel_name=None, user_id=user_id)
        reply = await self._core.handle(caller, "settings", prefix=self._prefix)
        blocks = [
            block
            for message in render.reply_messages(Platform.SLACK, reply)
            for block in payload(message).blocks
        ]
        view = {"type": "home", "blocks": blocks[:MAX_VIEW_BLOCKS]}
        api_client = self._api()
        try:
            await api_client.views_publish(user_id=user_id, view=view)
        except SlackApiError as exc:
            log.warning("slack: the Home tab could not be shown: %s", error_code(exc))

    async def _on_archived(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/channel_archive, .../group_archive."""
        self._enter(context, None)
        await self._stopped(self._address(str(event.get("channel") or "")), reason=ARCHIVED_REASON)

    async def _on_deleted(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/channel_deleted, .../group_deleted."""
        self._enter(context, None)
        await self._stopped(self._address(str(event.get("channel") or "")), reason=DELETED_REASON)

    async def _on_unarchived(self, event: dict[str, Any], context: Mapping[str, Any]) -> None:
        """https://api.slack.com/events/channel_unarchive, .../group_unarchive: a chat made
        inactive by the archive is active again; what was published meanwhile is skipped."""
        self._enter(context, None)
        channel = self._address(str(event.get("channel") or ""))
        if await self._core.chat_reachable(
            platform=Platform.SLACK,
            chat_id=channel,
            codes=frozenset({ARCHIVED_REASON}),
            states=frozenset({ChatState.INACTIVE}),
        ):
            log.info("slack: channel unarchived; deliveries resume", extra=log_extra(channel))

    async def _stopped(self, channel: str, *, reason: str) -> None:
        """The channel can take no more messages: its chat is inactive, its queue failed."""
        if not channel:
            return
        if await self._core.chat_gone(
            platform=Platform.SLACK, chat_id=channel, reason=reason, code=reason
        ):
            self._conversations.pop(channel, None)
            log.info("slack: chat now inactive: %s", reason, extra=log_extra(channel))

    async def _reachable(
        self, req: AsyncBoltRequest, next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        """Bolt middleware before authorization (installed by OAuth), for a command or a
        button: a workspace where the app is not installed is told so (with the install
        page's link when ``PUBLIC_BASE_URL`` is set), logged at INFO once an hour per
        workspace; one whose stored token no key of ``SLACK_TOKEN_KEY`` opens is told that
        the bot cannot reach it and that its operator knows (logged at ERROR, shown in
        ``/healthz``). Any other request goes on."""
        from bot.store.installations import TokenKeyError

        context = req.context
        team = context.team_id
        if self._workspaces is None or not team or context.response_url is None:
            await next()
            return None
        try:
            token = await self._workspaces.token(team_id=team, enterprise_id=context.enterprise_id)
        except TokenKeyError:
            await self._tell(
                context, "\n".join(t(lang, "slack.oauth.unreachable") for lang in LANGUAGES)
            )
            return BoltResponse(status=200, body="")
        except Exception:  # authorization asks again and answers for itself
            token = ""
        if token is None:
            if self._not_installed_seen.add(team, now=time.monotonic()):
                log.info(
                    "slack: a request from workspace %s, where the app is not installed",
                    team,
                    extra={"platform": "slack"},
                )
            await self._tell(context, self._not_installed_text(team))
            return BoltResponse(status=200, body="")
        await next()
        return None

    def _not_installed_text(self, team: str) -> str:
        """ "Not installed in this workspace" in both languages (the workspace's is not known
        before it installs the app), with the link that preselects it on Slack's page."""
        from bot.channels.slack.oauth import INSTALL_PATH, TEAM_PARAM_RE

        base = self._settings.public_base_url
        if base and TEAM_PARAM_RE.match(team):
            link = f"{base}{INSTALL_PATH}?team={team}"
            said = [t(lang, "slack.oauth.not_installed_link", url=link) for lang in LANGUAGES]
        else:
            said = [t(lang, "slack.oauth.not_installed") for lang in LANGUAGES]
        return "\n".join(said)

    async def _tell(self, context: Any, text: str) -> None:
        try:
            await context.respond(text)
        except CALL_ERRORS as exc:
            log.warning(
                "slack: could not answer through response_url: %s",
                translate_error(exc).reason,
                extra={"platform": "slack"},
            )
