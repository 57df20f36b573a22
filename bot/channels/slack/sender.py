"""Outgoing messages -> the Web API: the delivery engine's :class:`SlackSender`."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError, SlackTokenRotationError
from slack_sdk.web.async_client import AsyncWebClient

from bot.channels.slack.client import (
    CALL_ERRORS,
    REFUSED_BLOCKS,
    RESEND_TIMEOUT_SECONDS,
    SlackAuth,
    error_code,
    log,
    needed_scopes,
    translate_error,
)
from bot.channels.slack.payload import payload
from bot.delivery.pacing import Pacing
from bot.delivery.sender import Attempt, BaseSender
from bot.errors import (
    ChatGone,
    PermanentError,
    PlatformAuthFailed,
    TransientError,
)
from bot.models import (
    ChatSettings,
    Outgoing,
    Platform,
)

if TYPE_CHECKING:
    from bot.channels.slack.oauth import Workspaces


class SlackSender(BaseSender):
    """Posts rendered messages to Slack conversations (satisfies ``bot.delivery.engine.Sender``).

    Slack limits posting per channel (about one message a second, :meth:`interval`) and,
    above that, per workspace (``rate_per_second``, ``SLACK_WORKSPACE_RATE_PER_SECOND``).
    A refused token stops every send (:class:`SlackAuth`); the delivery engine waits on
    :meth:`wait_authorized` before it sends to Slack again. A re-send of a message whose
    send had no answer waits ``resend_timeout`` seconds for its answer (the client's own
    timeout for the rest).
    """

    platform = Platform.SLACK

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        per_channel_rate: float,
        workspace_rate: float | None = None,
        auth: SlackAuth | None = None,
        workspaces: Workspaces | None = None,
        resend_timeout: int = RESEND_TIMEOUT_SECONDS,
    ) -> None:
        self._client = client
        # The same client (its session, its token), waiting longer for an answer.
        self._patient = copy.copy(client)
        self._patient.timeout = resend_timeout
        self._interval = 1.0 / per_channel_rate
        self._workspace_rate = workspace_rate
        # Each workspace's pace and the channels' slots, shared with the replies.
        self.pacing: Pacing = Pacing(workspace_rate)
        self.auth = auth or SlackAuth(client)
        self._workspaces = workspaces
        # Workspaces (pace_key; "" for the one of a bot token) that refused a message's
        # blocks and took its fallback blocks: they get the fallback blocks from then on.
        self.fallback_workspaces: set[str] = set()

    @property
    def rate_per_second(self) -> float | None:
        return self._workspace_rate

    def interval(self, chat: ChatSettings) -> float:
        return self._interval

    def pace_key(self, chat_id: str) -> str | None:
        """The workspace whose cap a send to ``chat_id`` counts against (installed by
        OAuth: ``T123`` of ``T123/C456``); None for the one workspace of a bot token."""
        if self._workspaces is None:
            return None
        from bot.channels.slack.oauth import split_address

        parts = split_address(chat_id)
        return parts[0] if parts else None

    async def wait_authorized(self) -> None:
        """Return once Slack accepts the bot token again."""
        await self.auth.wait_accepted()

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None:
        """``chat.postMessage`` of one message; returns its ``ts``.

        ``chat_id`` is a channel id, or a user id for the user's DM with the app (Slack posts
        it in the App Home messages tab). A message marked ``in_thread`` goes into the thread
        of ``thread`` (the ``ts`` of the delivery's first message). Links and media are never
        unfurled; plain messages (broadcasts) are posted with mrkdwn off.

        Raises:
            DeliveryError: a subclass saying what to do (see :func:`translate_error`);
                :class:`PlatformAuthFailed` at once, without a call, while the token is refused.
        """
        api_client = self._patient if attempt is not None and attempt.resend else self._client
        if self._workspaces is not None:
            return await self._send_installed(
                chat_id, message, thread=thread, api_client=api_client
            )
        if self.auth.error is not None:
            code = self.auth.error
            raise PlatformAuthFailed(f"{code}: Slack refused the bot token", code=code)
        try:
            response = await self._post(
                message, channel=chat_id, thread=thread, workspace="", api_client=api_client
            )
        except CALL_ERRORS as exc:
            error = translate_error(exc)
            if isinstance(error, PlatformAuthFailed):
                self.auth.refused(error.code, needed=needed_scopes(exc))
            raise error from None
        ts = response.get("ts")
        return str(ts) if ts else None

    async def _send_installed(
        self,
        chat_id: str,
        message: Outgoing,
        *,
        thread: str | None,
        api_client: AsyncWebClient,
    ) -> str | None:
        """Installed by OAuth: post with the token of the chat's workspace (``T123/C456``).

        A workspace that no longer has the app (uninstalled, its token refused) stops its
        own chats, never the others': they become inactive (:class:`ChatGone`) until the
        app is installed there again.
        """
        from bot.channels.slack.oauth import NO_INSTALLATION, UNREADABLE_REASON, split_address
        from bot.store.installations import TokenKeyError

        assert self._workspaces is not None
        parts = split_address(chat_id)
        if parts is None:
            raise ChatGone(
                f"{NO_INSTALLATION}: a chat id without its workspace", code=NO_INSTALLATION
            )
        team, channel = parts
        try:
            token = await self._workspaces.token(team_id=team)
        except TokenKeyError:
            # The operator is told (ERROR, /healthz); the chats wait for the key, not for
            # a reinstall: nothing is made inactive.
            raise TransientError(f"{UNREADABLE_REASON} ({team})") from None
        except SlackTokenRotationError:
            raise TransientError("token_refresh_failed: Slack refused the refresh") from None
        except CALL_ERRORS as exc:
            raise TransientError(f"token_refresh: {translate_error(exc).reason}") from None
        if token is None:
            raise ChatGone(
                f"{NO_INSTALLATION}: the app is not installed in {team}", code=NO_INSTALLATION
            )
        try:
            response = await self._post(
                message,
                channel=channel,
                thread=thread,
                workspace=team,
                token=token,
                api_client=api_client,
            )
        except CALL_ERRORS as exc:
            error = translate_error(exc)
            if isinstance(error, PlatformAuthFailed):
                self._workspaces.forget(enterprise_id=None, team_id=team)
                if error.code == "token_expired":  # read (and refreshed) again next time
                    raise TransientError(error.code) from None
                if error.code == "missing_scope":
                    raise PermanentError(error.code) from None
                raise ChatGone(
                    f"{error.code}: Slack refused the workspace's token", code=error.code
                ) from None
            raise error from None
        ts = response.get("ts")
        return str(ts) if ts else None

    async def _post(
        self,
        message: Outgoing,
        *,
        channel: str,
        thread: str | None,
        workspace: str,
        api_client: AsyncWebClient,
        token: str | None = None,
    ) -> Any:
        """``chat.postMessage``; where Slack refuses the blocks (``invalid_blocks``) of a
        message that has fallback blocks, the message again with those, and the workspace
        keeps to them (logged once per workspace). Nothing was posted by the refused call,
        so nothing is posted twice; a refusal of the fallback blocks too is raised."""
        extra: dict[str, Any] = {} if token is None else {"token": token}
        fallback = payload(message).fallback_blocks
        if fallback and workspace in self.fallback_workspaces:
            return await api_client.chat_postMessage(
                **extra, **_post_args(message, channel=channel, thread=thread, blocks=fallback)
            )
        try:
            return await api_client.chat_postMessage(
                **extra, **_post_args(message, channel=channel, thread=thread)
            )
        except SlackApiError as exc:
            if not fallback or error_code(exc) != REFUSED_BLOCKS:
                raise
        response = await api_client.chat_postMessage(
            **extra, **_post_args(message, channel=channel, thread=thread, blocks=fallback)
        )
        if workspace not in self.fallback_workspaces:
            self.fallback_workspaces.add(workspace)
            log.warning(
                "slack: %s refused the digest's container blocks (%s); its digests go out "
                "as sections from now on",
                f"workspace {workspace}" if workspace else "the workspace",
                REFUSED_BLOCKS,
                extra={"platform": "slack"},
            )
        return response


def _post_args(
    message: Outgoing,
    *,
    channel: str,
    thread: str | None,
    blocks: tuple[dict[str, object], ...] | None = None,
) -> dict[str, Any]:
    return {
        "channel": channel,
        "text": message.text,
        "blocks": list(payload(message).blocks if blocks is None else blocks) or None,
        "thread_ts": thread if message.in_thread and thread else None,
        "unfurl_links": False,
        "unfurl_media": False,
        "mrkdwn": not message.plain,
    }


__all__ = [
    "SlackSender",
]
