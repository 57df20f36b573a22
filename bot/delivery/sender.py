"""The port between the delivery engine and a platform: :class:`Sender`, and the defaults
of its optional abilities (:class:`BaseSender`) for a platform that has no use for them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from bot.delivery.pacing import Pacing
from bot.models import ChatSettings, Outgoing, Platform

# A platform that refused the credentials, whose sender cannot say when they work again, is
# tried again after this long.
AUTH_PAUSE_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Attempt:
    """What the engine knows of one send of one platform message.

    ``key`` names the message part and is the same on every send of it, in every process
    (the outbox row and the part: ``"123.0"``): an idempotency key for a platform that
    takes one (Discord's ``nonce``, at most 25 characters). ``resend`` is true when an
    earlier send of it had no answer (its outcome is unknown, it may have arrived): the
    sender waits longer for this one's answer.
    """

    key: str
    resend: bool = False


class Sender(Protocol):
    """A platform's outbound adapter.

    ``send`` delivers one message and returns the platform's reference for it (Slack's
    ``ts``, used to thread the rest of a digest), raising a ``DeliveryError`` subclass on
    failure. ``rate_per_second`` is the platform-wide cap (None: no cap); ``interval`` the
    least spacing between two messages to one chat.

    ``attempt`` is what the engine knows of this send (None: a send outside the outbox,
    with no key). ``send`` raises :class:`~bot.errors.OutcomeUnknown` when the request left
    and no answer came. Such a message is re-sent at most once (after a pause, with
    ``attempt.resend`` true) and held when that has no answer either, since each re-send
    may post it again. A platform that takes an idempotency key gets ``attempt.key`` for
    it (Discord's message create: ``nonce`` with ``enforce_nonce``); the platform drops a
    re-send it already has for a few minutes only, so the bound stays the same for it.

    The rest say how the platform counts its limits and when it works again;
    :class:`BaseSender` has a default for each.
    """

    platform: Platform

    @property
    def rate_per_second(self) -> float | None: ...

    @property
    def pacing(self) -> Pacing | None:
        """The platform's pacing, shared with the replies to commands (None: the engine
        makes its own, at ``rate_per_second``)."""
        ...

    def interval(self, chat: ChatSettings) -> float: ...

    def pace_key(self, chat_id: str) -> str | None:
        """Whose cap a send to ``chat_id`` counts against, when that is not the platform's
        alone (a Slack workspace); None for the platform's."""
        ...

    def slot_key(self, chat_id: str) -> str:
        """The key of the chat's per-chat limit: the chat, or what shares its limit (the
        forum group of a Telegram topic)."""
        ...

    async def wait_authorized(self) -> None:
        """Return once the platform accepts the credentials again (called after a send
        raised ``PlatformAuthFailed``)."""
        ...

    async def send(
        self, chat_id: str, message: Outgoing, *, thread: str | None, attempt: Attempt | None = None
    ) -> str | None: ...


class BaseSender:
    """The defaults of :class:`Sender`'s abilities: the engine's own pacing, the platform's
    cap for every chat, a slot per chat, a fixed wait after refused credentials, and
    re-sends that may post a message twice."""

    pacing: Pacing | None = None

    def pace_key(self, chat_id: str) -> str | None:
        """None: every send counts against the platform's cap."""
        return None

    def slot_key(self, chat_id: str) -> str:
        """The chat itself."""
        return chat_id

    async def wait_authorized(self) -> None:
        """Cannot tell when the credentials work again: wait ``AUTH_PAUSE_SECONDS``."""
        await asyncio.sleep(AUTH_PAUSE_SECONDS)
