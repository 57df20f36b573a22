"""One tree of errors. Adapters translate library errors into these at the boundary."""

from __future__ import annotations


class BotError(Exception):
    """Base of every error the bot raises on purpose."""


class ConfigError(BotError):
    """A configuration value is missing or malformed; ``variable`` names it."""

    def __init__(self, variable: str, message: str) -> None:
        super().__init__(f"{variable}: {message}")
        self.variable = variable
        self.message = message


class SourceError(BotError):
    """A whole source failed: a missing directory, an unreachable or unparsable feed.

    ``reason`` is public (``/healthz`` shows it); ``detail``, when set, is what the log
    shows instead: the outside's own words (git's error output), which may name what the
    bot's network can reach.
    """

    def __init__(self, source: str, reason: str, *, detail: str | None = None) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason
        self.detail = detail


class ParseError(BotError):
    """One file or entry could not be parsed; the scan goes on without it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FilterError(BotError):
    """A filter argument is malformed; ``item`` is the offending word (may be empty)."""

    def __init__(self, item: str, reason: str) -> None:
        super().__init__(f"{item!r}: {reason}")
        self.item = item
        self.reason = reason


class DeliveryError(BotError):
    """A send failed. Subclasses say what the delivery loop should do about it
    (:func:`bot.delivery.failures.decide`).

    ``reason`` is for people (logs, the outbox's ``last_error``, ``/why``); ``code`` is a
    short stable word for machines (metrics labels): the platform's error code where it
    has one (``bot_blocked``, Slack's ``channel_not_found``), else the class's ``CODE``.
    """

    CODE = "error"

    def __init__(self, reason: str, *, code: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code or self.CODE


class RateLimited(DeliveryError):
    """The platform asked us to wait ``retry_after`` seconds before sending to this chat."""

    CODE = "rate_limited"

    def __init__(self, reason: str, *, retry_after: float, code: str | None = None) -> None:
        super().__init__(reason, code=code)
        self.retry_after = retry_after


class TransientError(DeliveryError):
    """5xx, timeout, connection error: retry with backoff.

    ``ambiguous`` is true when the request may have reached the platform (a timeout after
    the request was sent), so a retry may produce a duplicate: see :class:`OutcomeUnknown`.
    """

    CODE = "transient"

    def __init__(self, reason: str, *, ambiguous: bool = False, code: str | None = None) -> None:
        super().__init__(reason, code=code)
        self.ambiguous = ambiguous


class OutcomeUnknown(TransientError):
    """The send's outcome is unknown: its request left and no answer came (a timeout after
    the request was written, a connection broken while waiting, Slack's ``fatal_error``).
    The message may have arrived, so sending it again may post it twice.

    The message is re-sent at most once, after a pause and with a longer timeout, and held
    (not sent again) when that re-send has no answer either
    (:func:`bot.delivery.failures.decide`); on every platform, since an idempotency key
    (Discord's ``nonce`` with ``enforce_nonce``) holds for a few minutes only.
    """

    CODE = "outcome_unknown"

    def __init__(self, reason: str, *, code: str | None = None) -> None:
        super().__init__(reason, ambiguous=True, code=code)


class ChatGone(DeliveryError):
    """Permanent: blocked, kicked, archived, not found. The chat becomes inactive."""

    CODE = "chat_gone"


class ChatMigrated(DeliveryError):
    """A Telegram group became a supergroup with ``new_chat_id``; resend there."""

    CODE = "chat_migrated"

    def __init__(self, reason: str, *, new_chat_id: str, code: str | None = None) -> None:
        super().__init__(reason, code=code)
        self.new_chat_id = new_chat_id


class NotInChannel(DeliveryError):
    """Slack: the bot is not a member of the channel; the chat is paused with a hint."""

    CODE = "not_in_channel"


class PlatformAuthFailed(DeliveryError):
    """The platform refused the bot's credentials (``code``, e.g. Slack's ``invalid_auth``):
    nothing can be sent anywhere on it until they work again. Messages stay queued and no
    chat's state changes; the adapter says when the credentials work again."""

    def __init__(self, reason: str, *, code: str) -> None:
        super().__init__(reason, code=code)


class PermanentError(DeliveryError):
    """Any other failure that a retry will not fix (a malformed message)."""

    CODE = "permanent"


class TransferError(BotError):
    """An ``import`` line is malformed: ``reason`` says how, ``field`` where.

    ``value`` is the offending value as written and ``detail`` what is wrong with it.
    """

    def __init__(self, reason: str, *, field: str = "", value: str = "", detail: str = "") -> None:
        super().__init__(f"{reason}: {field} {value!r} {detail}".strip())
        self.reason = reason
        self.field = field
        self.value = value
        self.detail = detail


class SchemaError(BotError):
    """The database's schema is one this build cannot run on or bring up to date.

    ``reason`` is one line for the operator, saying what to do; the command exits 2.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
