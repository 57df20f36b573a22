"""Who and where a request comes from, and how the Slack channel answers it.

:class:`ChannelBase` holds what every handler of
:class:`~bot.channels.slack.channel.SlackChannel` uses: the conversation a request names
(a channel, a direct message, a workspace's installation), the caller, and the replies
(in the acknowledgement, through the ``response_url``, charts as files).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

import aiohttp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot import render
from bot.channels.slack.client import (
    CALL_ERRORS,
    CHANNEL_NOT_FOUND,
    CHART_FILENAME,
    CONVERSATION_TIMEOUT_SECONDS,
    DM_CHANNEL_NAME,
    DM_CHANNEL_PREFIX,
    GROUP_DM_NAME_PREFIX,
    LOCALE_TIMEOUT_SECONDS,
    MAX_ALT_TEXT_CHARS,
    MAX_REMEMBERED_CONVERSATIONS,
    SlackAuth,
    log,
    retry_after_seconds,
    translate_error,
)
from bot.channels.slack.payload import payload
from bot.channels.slack.settings import SlackSettings
from bot.commands import Caller, ChatStatus, CommandCore
from bot.delivery.replies import Replies
from bot.errors import (
    PermanentError,
    RateLimited,
    TransientError,
)
from bot.i18n import negotiate, t
from bot.keyed import KeyedLocks, SeenKeys
from bot.models import (
    Chart,
    ChatKind,
    ChatState,
    Outgoing,
    Platform,
    Reply,
)
from bot.render import charts

if TYPE_CHECKING:
    from bot.channels.slack.oauth import Workspaces


def unescape(text: str) -> str:
    """Slack's escaping of ``&``, ``<`` and ``>`` in what a user typed, undone."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class Where(Enum):
    """Where a command was typed, as far as posting there goes."""

    CHANNEL = "channel"  # a channel the bot can post to (a member, or public)
    APP_DM = "app_dm"  # the user's DM with the app (App Home messages tab)
    PEOPLE_DM = "people_dm"  # a DM between people or a group DM: the bot cannot post
    INVITE = "invite"  # a private channel the bot is not a member of


class _Answer(NamedTuple):
    """A command's reply (None: nothing to say), and whether the command failed."""

    reply: Reply | None
    failed: bool = False


@dataclass(frozen=True, slots=True)
class Conversation:
    where: Where
    chat_id: str  # where deliveries go: the channel's id, or the user's for the App DM


@dataclass(frozen=True, slots=True)
class _Workspace:
    """The workspace a request came from, for everything its handler calls."""

    team_id: str
    enterprise_id: str | None
    client: AsyncWebClient | None  # installed by OAuth: a client with its token
    addressed: bool  # installed by OAuth: chat ids name the team (T123/C456)


# Set by each handler (Bolt runs every listener in a task of its own).
_WORKSPACE: ContextVar[_Workspace | None] = ContextVar("slack_workspace", default=None)


class ChannelBase:
    """Set up by :class:`~bot.channels.slack.channel.SlackChannel`."""

    _settings: SlackSettings
    _ack_budget: float
    _replies: Replies
    _reply_interval: float
    auth: SlackAuth
    _workspaces: Workspaces | None
    fallback_workspaces: set[str]
    _core: CommandCore
    _client: AsyncWebClient
    _prefix: str
    _locks: KeyedLocks[str]
    _tasks: set[asyncio.Task[Any]]
    _bot_name: str | None
    _bot_user_id: str | None
    _events: SeenKeys[str]
    _conversations: OrderedDict[str, Conversation]
    _scope_warned: set[str]
    _not_installed_seen: SeenKeys[str]
    _http_mode: bool

    @property
    def oauth(self) -> bool:
        """Installed by OAuth to many workspaces (``SLACK_CLIENT_ID``)."""
        return self._workspaces is not None

    def _enter(self, context: Mapping[str, Any], client: AsyncWebClient | None) -> None:
        """Remember the request's workspace for what its handler calls, and the handler's
        task, which Bolt starts on its own after acknowledging: :meth:`stop` waits for it
        like for the channel's own, so that none is cut off in the middle of its work."""
        self._track(asyncio.current_task())
        team = str(context.get("team_id") or "")
        if not team:
            _WORKSPACE.set(None)
            return
        enterprise = context.get("enterprise_id")
        _WORKSPACE.set(
            _Workspace(
                team_id=team,
                enterprise_id=str(enterprise) if enterprise else None,
                client=client if self.oauth else None,
                addressed=self.oauth,
            )
        )

    def _address(self, conversation: str) -> str:
        """The chat id of a conversation of the current workspace (``T123/C456`` when
        installed by OAuth; the conversation's own id with a bot token)."""
        current = _WORKSPACE.get()
        if current is None or not current.addressed or not conversation:
            return conversation
        return f"{current.team_id}/{conversation}"

    def _api(self) -> AsyncWebClient:
        """The client for the current workspace's calls."""
        current = _WORKSPACE.get()
        return current.client if current is not None and current.client else self._client

    def _track(self, task: asyncio.Task[Any] | asyncio.Future[Any] | None) -> None:
        if isinstance(task, asyncio.Task):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _caller(
        self, conversation: Conversation, *, channel_name: Any, user_id: str
    ) -> Caller:
        name = str(channel_name) if channel_name else None
        group = conversation.where == Where.CHANNEL
        current = _WORKSPACE.get()
        installer = None
        if self._workspaces is not None and current is not None:
            installer = await self._workspaces.installer(team_id=current.team_id)
        return Caller(
            platform=Platform.SLACK,
            chat_id=conversation.chat_id,
            user_id=user_id,
            chat_kind=ChatKind.GROUP if group else ChatKind.PRIVATE,
            chat_title=f"#{name}" if group and name else None,
            can_manage=None,
            workspace=current.team_id if current is not None else None,
            workspace_admin=bool(installer) and installer == user_id,
        )

    async def _conversation(
        self, *, channel_id: str, channel_name: Any, user_id: str
    ) -> Conversation:
        """Where a command was typed, from conversations.info, once per conversation.

        The bot sees only the conversations it may post to: a private channel it is not in,
        a DM between people and a group DM answer ``channel_not_found``
        (https://api.slack.com/methods/conversations.info), told apart by the conversation's
        id and name. In the DM with the app the chat is the user's, delivered to their id.
        Needs channels:read, groups:read and im:read; without one (``missing_scope``, logged
        once naming it) or when Slack does not answer, the id and name decide.
        """
        key = self._address(channel_id)
        known = self._conversations.get(key)
        if known is not None:
            # A chat whose sends stopped (the bot removed, the channel archived) is looked
            # at again: the command may be the user's answer to that.
            status = await self._status(known.chat_id)
            if status is None or status.state != ChatState.INACTIVE:
                self._conversations.move_to_end(key)
                return known
            del self._conversations[key]
        conversation = await self._look_up(channel_id, channel_name=channel_name, user_id=user_id)
        conversation = replace(conversation, chat_id=self._address(conversation.chat_id))
        if conversation.where == Where.APP_DM:
            await self._move_dm(key, conversation.chat_id)
        if conversation.where in (Where.CHANNEL, Where.APP_DM):
            self._conversations[key] = conversation
            while len(self._conversations) > MAX_REMEMBERED_CONVERSATIONS:
                self._conversations.popitem(last=False)
        return conversation

    async def _where_from(
        self, *, channel_id: str, channel_name: Any, user_id: str
    ) -> tuple[Conversation, Reply | None]:
        """Where a command or a button press came from (:meth:`_conversation`), and the
        refusal to answer there instead where subscriptions do not work (:meth:`_refusal`)."""
        conversation = await self._conversation(
            channel_id=channel_id, channel_name=channel_name, user_id=user_id
        )
        if conversation.where in (Where.PEOPLE_DM, Where.INVITE):
            return conversation, await self._refusal(conversation, user_id=user_id)
        return conversation, None

    async def _look_up(self, channel_id: str, *, channel_name: Any, user_id: str) -> Conversation:
        """Where a command was typed, in the conversation ids of the workspace."""
        name = str(channel_name or "")
        guess = _guess(channel_id, name, user_id=user_id)
        api_client = self._api()
        try:
            async with asyncio.timeout(CONVERSATION_TIMEOUT_SECONDS):
                response = await api_client.conversations_info(channel=channel_id)
        except SlackApiError as exc:
            data = getattr(exc.response, "data", None)
            code = str(data.get("error") or "") if isinstance(data, dict) else ""
            if code == CHANNEL_NOT_FOUND:
                where = Where.PEOPLE_DM if guess.where != Where.CHANNEL else Where.INVITE
                return Conversation(where, channel_id)
            if code == "missing_scope" and isinstance(data, dict):
                needed = str(data.get("needed") or "")
                if needed not in self._scope_warned:
                    self._scope_warned.add(needed)
                    log.warning(
                        "slack: conversations.info needs the %s scope, which the app lacks; "
                        "add it (deploy/slack-app-manifest.yml) so the bot can tell where it "
                        "can post",
                        needed[:100],
                        extra={"platform": "slack"},
                    )
            else:
                log.info("slack: conversations.info failed: %s", translate_error(exc).reason)
            return guess
        except CALL_ERRORS as exc:
            log.info("slack: conversations.info failed: %s", translate_error(exc).reason)
            return guess
        info = response.get("channel") or {}
        if not isinstance(info, dict):
            return guess
        if info.get("is_im"):
            return Conversation(Where.APP_DM, str(info.get("user") or user_id))
        if info.get("is_mpim"):
            return Conversation(Where.PEOPLE_DM, channel_id)
        if info.get("is_private") and not info.get("is_member"):
            return Conversation(Where.INVITE, channel_id)
        return Conversation(Where.CHANNEL, channel_id)

    async def _move_dm(self, dm_channel: str, user_id: str) -> None:
        """A DM chat kept under its conversation id (``D…``) moves to the user's id, once."""
        if not user_id or dm_channel == user_id:
            return
        await self._core.chat_readdressed(
            platform=Platform.SLACK, old_chat_id=dm_channel, new_chat_id=user_id
        )

    async def _refusal(self, conversation: Conversation, *, user_id: str) -> Reply:
        """Where subscriptions work (a DM between people, a group DM), or how to invite the
        app (a private channel without it); in the user's Slack language."""
        locale = await self._user_locale(user_id)
        lang = negotiate(locale, default=self._settings.default_language)
        if conversation.where == Where.PEOPLE_DM:
            return Reply(lang, t(lang, "slack.where_subscriptions_work", p=self._prefix))
        if self._bot_name:
            return Reply(lang, t(lang, "slack.invite_first", bot=self._bot_name, p=self._prefix))
        return Reply(lang, t(lang, "slack.invite_first_unnamed", p=self._prefix))

    async def _answer(
        self, caller: Caller, run: Callable[[Caller], Awaitable[Reply | None]]
    ) -> _Answer:
        """Run a command for ``caller`` under the chat's lock; never raises: a failure is
        logged and answered with ``cmd.error``."""
        lang: str = self._settings.default_language
        try:
            async with self._locks.hold(caller.chat_id):
                before = await self._status(caller.chat_id)
                if before is not None:
                    lang = before.lang
                else:
                    locale, zone = await self._user_profile(caller.user_id)
                    caller = replace(caller, language_code=locale, timezone=zone)
                    lang = negotiate(locale, default=lang)
                reply = await run(caller)
                # A chat learns its workspace (and organisation) the first time it is used.
                after = await self._status(caller.chat_id, note_workspace=True)
                if reply is None:
                    return _Answer(None)
                if after is not None and after.waits_for_invite:
                    reply = replace(reply, text=f"{reply.text}\n\n{self._invite_hint(reply.lang)}")
                return _Answer(reply)
        except Exception as exc:
            log.exception(
                "slack: command failed: %s",
                type(exc).__name__,
                extra={"chat": f"slack:{caller.chat_id}", "platform": "slack"},
            )
            return _Answer(Reply(lang, t(lang, "cmd.error")), failed=True)

    async def _status(self, chat_id: str, *, note_workspace: bool = False) -> ChatStatus | None:
        """The chat's status; with ``note_workspace``, the chat records the request's
        workspace if it did not know it."""
        current = _WORKSPACE.get() if note_workspace else None
        return await self._core.chat_status(
            platform=Platform.SLACK,
            chat_id=chat_id,
            team_id=current.team_id if current is not None else None,
            enterprise_id=current.enterprise_id if current is not None else None,
        )

    async def _user_locale(self, user_id: str) -> str | None:
        """The user's Slack locale (``ko-KR``); None if unknown."""
        locale, _zone = await self._user_profile(user_id)
        return locale

    async def _user_profile(self, user_id: str) -> tuple[str | None, str | None]:
        """The user's Slack locale (``ko-KR``) and time zone (``Asia/Seoul``), for a new
        chat's language and zone; None for what is unknown.

        One users.info call per new chat; it needs the ``users:read`` scope, and without it
        (or when Slack is slow) the chat simply starts in ``DEFAULT_LANGUAGE`` and
        ``DEFAULT_TIMEZONE``.
        """
        if not user_id:
            return None, None
        try:
            async with asyncio.timeout(LOCALE_TIMEOUT_SECONDS):
                api_client = self._api()
                response = await api_client.users_info(user=user_id, include_locale=True)
        except CALL_ERRORS as exc:
            log.debug("slack: no locale for a user: %s", translate_error(exc).reason)
            return None, None
        user = response.get("user") or {}
        if not isinstance(user, dict):
            return None, None
        # https://api.slack.com/methods/users.info: ``tz`` is an IANA name such as
        # "America/Los_Angeles"; a value that is not one leaves the default zone.
        locale, zone = user.get("locale"), user.get("tz")
        return (
            str(locale) if isinstance(locale, str) and locale else None,
            zone if isinstance(zone, str) and zone else None,
        )

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

        async def post() -> None:
            try:
                if replace_original:
                    answer = await respond(replace_original=True, **ephemeral(reply))
                else:
                    answer = await respond(**ephemeral(reply))
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise TransientError(type(exc).__name__) from None
            except (SlackClientError, ValueError) as exc:
                raise PermanentError(type(exc).__name__) from None
            status = getattr(answer, "status_code", 200)
            if status == 429:
                seconds = retry_after_seconds(getattr(answer, "headers", None))
                raise RateLimited(f"response_url answered {status}", retry_after=seconds)
            if status >= 500:
                raise TransientError(f"response_url answered {status}")
            if status != 200:
                raise PermanentError(f"response_url answered {status}")

        # Through the workspace's pace and the channel's slot, as deliveries go.
        key, _, _ = chat_id.rpartition("/")
        await self._replies.send(
            post, chat=chat_id, interval=self._reply_interval, pace_key=key or None
        )

    async def _send_chart(
        self, reply: Reply, conversation: Conversation, *, channel_id: Any
    ) -> None:
        """A reply's chart, after its text, where it stays as private as the text: in the
        user's DM with the app, uploaded there (``files_upload_v2``:
        files.getUploadURLExternal, the upload, files.completeUploadExternal with the DM as
        ``channel_id``) with the alt text as its comment.

        Elsewhere the text is the whole answer. An ephemeral message cannot carry a file,
        nor an image block of one only the app can see (a file uploaded without a channel
        is private to its uploader, and ``slack_file`` wants the viewer to have access);
        sharing it into a channel would show everyone there what the command answered to
        one person. A chart that cannot be drawn or uploaded (no ``files:write`` scope,
        uploads disabled in the workspace) is logged, once, and nothing else happens."""
        chart = reply.chart
        if chart is None or conversation.where != Where.APP_DM or not channel_id:
            return
        png = await charts.picture(chart)
        if png is None:
            return
        try:
            api_client = self._api()
            await api_client.files_upload_v2(
                content=png,
                filename=CHART_FILENAME,
                title=_chart_title(chart),
                alt_txt=chart.alt[:MAX_ALT_TEXT_CHARS],
                channel=str(channel_id),
                initial_comment=chart.alt,
            )
        except CALL_ERRORS as exc:
            log.warning(
                "slack: could not upload a chart: %s",
                translate_error(exc).reason,
                extra=log_extra(conversation.chat_id),
            )


def _guess(channel_id: str, channel_name: str, *, user_id: str) -> Conversation:
    """Where a command was typed, from the conversation's id and name alone."""
    if channel_id.startswith(DM_CHANNEL_PREFIX) or channel_name == DM_CHANNEL_NAME:
        return Conversation(Where.APP_DM, user_id or channel_id)
    if channel_name.startswith(GROUP_DM_NAME_PREFIX):
        return Conversation(Where.PEOPLE_DM, channel_id)
    return Conversation(Where.CHANNEL, channel_id)


def log_extra(channel: str) -> dict[str, str]:
    """The ``extra`` of a log line about one conversation."""
    return {"chat": f"slack:{channel}", "platform": "slack"}


def received_at(context: Mapping[str, Any]) -> float:
    """When the request of a Bolt ``context`` arrived (``time.monotonic``); now if unknown."""
    value = context.get("trendbot_received")
    return float(value) if isinstance(value, int | float) else time.monotonic()


def _chart_title(chart: Chart) -> str:
    """The file's title: the first panel's, else the alt text."""
    title = chart.panels[0].title if chart.panels else ""
    return (title or chart.alt)[:MAX_ALT_TEXT_CHARS]


def _message(reply: Reply) -> Outgoing:
    return render.reply_messages(Platform.SLACK, reply)[0]


def ephemeral(reply: Reply) -> dict[str, Any]:
    """``reply`` as the fields of an ephemeral answer (an ack's or a response_url's)."""
    message = _message(reply)
    return {
        "response_type": "ephemeral",
        "text": message.text,
        "blocks": list(payload(message).blocks),
    }


__all__ = [
    "ChannelBase",
    "Conversation",
    "Where",
    "ephemeral",
    "log_extra",
    "received_at",
    "unescape",
]
