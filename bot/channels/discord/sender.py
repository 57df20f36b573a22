"""Outgoing messages -> Discord channels: the delivery engine's :class:`DiscordSender`, and
the translation of Discord's errors into the shared vocabulary (:mod:`bot.errors`)."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import orjson

from bot.channels.discord import components
from bot.channels.discord.payload import payload
from bot.channels.discord.rest import (
    ARCHIVED_THREAD,
    CANNOT_DM,
    INVALID_FORM_BODY,
    MISSING_ACCESS,
    MISSING_PERMISSIONS,
    UNKNOWN_CHANNEL,
    DiscordError,
    RestClient,
    describe_errors,
)
from bot.channels.discord.settings import DISCORD
from bot.delivery.pacing import Pacing
from bot.delivery.sender import Attempt, BaseSender
from bot.errors import (
    ChatGone,
    DeliveryError,
    NotInChannel,
    PermanentError,
    PlatformAuthFailed,
    RateLimited,
    TransientError,
)
from bot.models import ChatSettings, Outgoing

log = logging.getLogger("bot.channels.discord")

# The global rate limit: 50 requests a second for a bot, all routes together
# (https://discord.com/developers/docs/topics/rate-limits#global-rate-limit).
GLOBAL_RATE_PER_SECOND = 50.0
# Messages are paced at this much of it: the limit counts every request with the bot's
# token (the commands' registration at start, the token's check), and a fan-out's first
# second, while its connections open, arrives bunched (bench/discord_fanout.py: paced at the
# whole 50, 6-7 429s in 1,000 messages, all but two in its second second).
MESSAGE_RATE_PER_SECOND = 48.0
# Creating messages in one channel: Discord publishes no figure ("should not be hard
# coded"); its headers have long said 5 per 5 seconds. One a second keeps within it, and a
# bucket its headers say is used up holds the channel until it resets.
CHANNEL_INTERVAL_SECONDS = 1.0
# No mention in a message ever pings anyone: a page title with @everyone is text.
NO_MENTIONS: dict[str, Any] = {"parse": []}
# Message create's nonce: at most 25 characters.
NONCE_CHARS = 24


def translate_error(error: DiscordError) -> DeliveryError:
    """Discord's answer -> what the delivery engine does about it.

    10003 Unknown Channel: the chat is gone (inactive, ``unknown_channel``). 50007 the user
    accepts no DM from the bot: as if blocked (inactive, ``blocked``). 50001 Missing Access
    and 50013 Missing Permissions: paused, until the bot may post there again. 50035 Invalid
    Form Body: this message failed, with Discord's detail. 50083, a thread archived and
    locked (the bot may not reopen it): paused, as a channel it may not post in, until a
    command there shows it open again. 401: the token is refused. A 429:
    wait ``retry_after``. 5xx, timeouts and lost connections: retried with backoff.
    """
    reason = str(error)
    if error.status == 401:
        return PlatformAuthFailed(f"unauthorized: Discord refused the bot token ({reason})",
                                  code="unauthorized")  # fmt: skip
    if error.status == 429:
        code = "global_rate_limited" if error.is_global else "rate_limited"
        return RateLimited(reason, retry_after=error.retry_after, code=code)
    if error.code == UNKNOWN_CHANNEL:
        return ChatGone(reason, code="unknown_channel")
    if error.code == CANNOT_DM:
        return ChatGone(reason, code="blocked")
    if error.code == MISSING_ACCESS:
        return NotInChannel(reason, code="missing_access")
    if error.code == MISSING_PERMISSIONS:
        return NotInChannel(reason, code="missing_permissions")
    if error.code == ARCHIVED_THREAD:
        return NotInChannel(reason, code="thread_archived")
    if error.code == INVALID_FORM_BODY:
        return PermanentError(reason, code="invalid_form_body")
    if error.status == 0 or error.status >= 500:
        return TransientError(reason or "no answer", ambiguous=error.sent,
                              code="timeout" if error.status == 0 else "server_error")  # fmt: skip
    return PermanentError(reason, code=str(error.code or error.status))


def message_body(message: Outgoing, *, flags: int = 0) -> dict[str, Any]:
    """A message's JSON: its components with the V2 flag, or its text as content."""
    found = payload(message)
    body: dict[str, Any] = {"allowed_mentions": NO_MENTIONS}
    if found.components:
        body["flags"] = components.IS_COMPONENTS_V2 | flags
        body["components"] = list(found.components)
    else:
        body["content"] = message.text[: components.MAX_CONTENT_CHARS]
        if flags:
            body["flags"] = flags
    return body


def nonce(chat_id: str, body: dict[str, Any]) -> str:
    """The message's nonce: the same message to the same channel has the same one, so a
    send tried again after no answer creates nothing more (``enforce_nonce``)."""
    digest = hashlib.blake2b(chat_id.encode() + orjson.dumps(body), digest_size=12)
    return digest.hexdigest()[:NONCE_CHARS]


class DiscordSender(BaseSender):
    """Creates messages in Discord channels (satisfies ``bot.delivery.sender.Sender``).

    A chat is a channel: a guild's text channel, a thread, or a DM channel. Every message
    carries a nonce with ``enforce_nonce``: Discord returns the message a nonce already
    made in the last few minutes instead of making another, so the one re-send after a
    send with no answer (30 s later, ``bot.delivery.failures``) is no duplicate. Only
    within those minutes: the engine re-sends once and holds, as for any platform. The
    nonce is the engine's key of the message part (its outbox row and part), the same on
    every try and in every process; a message sent outside the outbox (a reply) hashes its
    channel and body instead.
    """

    platform = DISCORD

    def __init__(
        self, rest: RestClient, *, rate_per_second: float = MESSAGE_RATE_PER_SECOND
    ) -> None:
        self._rest = rest
        self._rate = rate_per_second
        # The global pace and the channels' slots, shared with what else the bot sends.
        self.pacing: Pacing = Pacing(rate_per_second)

    @property
    def rest(self) -> RestClient:
        return self._rest

    @property
    def rate_per_second(self) -> float | None:
        return self._rate

    def interval(self, chat: ChatSettings) -> float:
        return CHANNEL_INTERVAL_SECONDS

    async def send(
        self,
        chat_id: str,
        message: Outgoing,
        *,
        thread: str | None,
        attempt: Attempt | None = None,
    ) -> str | None:
        """Create one message in channel ``chat_id``; return its id.

        Raises:
            DeliveryError: a subclass saying what to do (:func:`translate_error`).
        """
        body = message_body(message)
        body["nonce"] = attempt.key if attempt is not None else nonce(chat_id, body)
        body["enforce_nonce"] = True
        try:
            answer = await self._rest.request(
                "POST", f"/channels/{chat_id}/messages", body=body, bucket=chat_id, paced=True
            )
        except DiscordError as exc:
            error = translate_error(exc)
            if isinstance(error, PermanentError) and exc.code == INVALID_FORM_BODY:
                log.warning(
                    "discord: a message was refused (50035 Invalid Form Body): %s",
                    describe_errors(exc.errors) or exc.message,
                    extra={"platform": "discord", "chat": f"discord:{chat_id}"},
                )
            raise error from None
        finally:
            reset = self._rest.bucket_reset.get(chat_id)
            if reset is not None:
                # The channel's bucket is used up: nothing leaves for it until it resets.
                self.pacing.chats.hold(chat_id, seconds=max(0.0, reset - self._rest.now()))
        found = answer.get("id") if isinstance(answer, dict) else None
        return str(found) if found else None


__all__ = ["DiscordSender", "message_body", "nonce", "translate_error"]
