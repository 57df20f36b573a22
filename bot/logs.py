"""Logging: text or one JSON object a line, with every configured secret redacted.

Every record is one line (a traceback adds its own lines below it): a value from outside
(a file name, an OAuth ``error``, an exception's message) cannot start a line of its own
or send a terminal escape. The text format writes CR, LF, ESC and every other C0 and C1
control, and U+2028/U+2029, as backslash escapes (``\\n``, ``\\x1b``); JSON escapes
them as JSON does, U+0085 and U+2028/U+2029 included, so each record stays one line.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TextIO

from bot import platforms

# The keys every JSON line has, in this order; values absent from a record are null.
JSON_KEYS = ("time", "level", "logger", "event", "chat", "platform", "page", "error")
REDACTED = "[redacted]"
# A chat's private feed address (a reply carries it; the libraries log requests at DEBUG).
FEED_TOKEN_IN_TEXT = re.compile(r"/feeds/[A-Za-z0-9_-]{43}\.atom")
# C0 and C1 controls, DEL, and the two Unicode line breaks: what can end a line, rewrite
# one (CR) or drive a terminal (ESC) where a log is read.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROLS_BUT_LF = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# The lines a traceback writes itself; between them, each frame is indented.
_TRACEBACK_LINES = frozenset(
    {
        "Traceback (most recent call last):\n",
        "\nThe above exception was the direct cause of the following exception:\n\n",
        "\nDuring handling of the above exception, another exception occurred:\n\n",
    }
)
_ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def _escape_one(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` on one line: every control character as a backslash escape."""
    return _CONTROLS.sub(_escape_one, text)


def escaped_traceback(exc_info: _ExcInfo) -> str:
    """A traceback whose own line breaks stay, with each exception's message escaped.

    The frames (file, line, source) and the chaining lines come from Python; the message
    (``ValueError: ...``) and any notes come from the program's input and are escaped like
    the record's message, so no line of a traceback can pass for a record.
    """
    parts = []
    for chunk in traceback.TracebackException(*exc_info).format():
        if chunk in _TRACEBACK_LINES or chunk.startswith("  "):
            parts.append(_CONTROLS_BUT_LF.sub(_escape_one, chunk))
        else:
            parts.append(escape_controls(chunk.removesuffix("\n")) + "\n")
    return "".join(parts).rstrip("\n")


class Redactor(logging.Filter):
    """Replaces every secret in a record's final message and exception text."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        # Each platform's tokens, however they turn up (bot.platforms.PlatformRules.redact).
        for rules in platforms.registered():
            for pattern in rules.redact:
                text = pattern.sub(REDACTED, text)
        return FEED_TOKEN_IN_TEXT.sub(f"/feeds/{REDACTED}.atom", text)

    def filter(self, record: logging.LogRecord) -> bool:
        message = self.redact(record.getMessage())
        record.msg, record.args = message, None
        if record.exc_info and record.exc_info[1] is not None:
            formatter = logging.Formatter()
            record.exc_text = self.redact(formatter.formatException(record.exc_info))
            record.exc_escaped = self.redact(escaped_traceback(record.exc_info))
            record.exc_info = None
        for key in ("chat", "platform", "page", "error"):
            value = getattr(record, key, None)
            if isinstance(value, str):
                setattr(record, key, self.redact(value))
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "event": record.getMessage(),
            "chat": getattr(record, "chat", None),
            "platform": getattr(record, "platform", None),
            "page": getattr(record, "page", None),
            "error": getattr(record, "error", None),
        }
        if record.exc_text:
            data["error"] = (data["error"] + "\n" if data["error"] else "") + record.exc_text
        line = json.dumps(data, ensure_ascii=False, default=str)
        # JSON lets these stand unescaped in a string; line readers split on them.
        return (
            line.replace("\x85", "\\u0085")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )


class TextFormatter(logging.Formatter):
    """``TIME LEVEL LOGGER: MESSAGE [context]``, one line with every control escaped.

    The message is escaped whole once its arguments are in, so a format string, its
    arguments and the context values are all covered; a traceback follows on its own
    lines (see :func:`escaped_traceback`).
    """

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        shown = logging.makeLogRecord(record.__dict__)  # other handlers see the original
        shown.msg, shown.args = escape_controls(record.getMessage()), None
        shown.exc_info, shown.exc_text = None, None
        exc_escaped = getattr(record, "exc_escaped", None)
        if record.exc_info and record.exc_info[1] is not None:
            exc_escaped = escaped_traceback(record.exc_info)
        elif exc_escaped is None and record.exc_text:
            exc_escaped = _CONTROLS_BUT_LF.sub(_escape_one, record.exc_text)
        shown.exc_text = exc_escaped
        shown.stack_info = (
            _CONTROLS_BUT_LF.sub(_escape_one, record.stack_info) if record.stack_info else None
        )
        line = super().format(shown)
        context = [
            f"{key}={escape_controls(str(getattr(record, key)))}"
            for key in ("platform", "chat", "page", "error")
            if getattr(record, key, None) is not None
        ]
        if not context:
            return line
        first, newline, rest = line.partition("\n")
        return f"{first} [{' '.join(context)}]{newline}{rest}"


def configure(
    *, level: str, fmt: str, secrets: Iterable[str], stream: TextIO | None = None
) -> None:
    """Install one handler on the root logger; called once by the CLI."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(Redactor(secrets))
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # The HTTP clients log every request URL at INFO/DEBUG, and a platform's URLs may hold
    # its token: the redactor covers them, and they are quiet below WARNING unless DEBUG.
    quiet = logging.DEBUG if level == "DEBUG" else logging.WARNING
    loggers = [logger for rules in platforms.registered() for logger in rules.loggers]
    for name in ("httpx", "httpcore", "apscheduler", "aiohttp.access", *loggers, "alembic"):
        logging.getLogger(name).setLevel(max(quiet, logging.getLevelName(level)))


# A public endpoint's refusals (an unsigned webhook, a forged install) are logged at most
# this often, with their count: anyone may send them, and one line each would let anyone
# fill the log.
REFUSALS_LOG_SECONDS = 60.0


class Refusals:
    """Counts the refusals of one kind and logs them: the first at once, then at most one
    line every ``every`` seconds, each with the number refused since the line before
    (those of a quiet spell are told with the next line). ``clock`` is for the tests."""

    def __init__(
        self,
        logger: logging.Logger,
        message: str,
        *,
        level: int = logging.WARNING,
        every: float = REFUSALS_LOG_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._message = message
        self._level = level
        self._every = every
        self._clock = clock
        self._count = 0
        self._logged_at: float | None = None
        self.total = 0  # refused since the start, for a test or a metric

    def refused(self, detail: str | None = None, **extra: Any) -> None:
        """One more refusal; ``detail`` (the last one's reason) goes into the line."""
        self._count += 1
        self.total += 1
        now = self._clock()
        if self._logged_at is not None and now - self._logged_at < self._every:
            return
        text = self._message if detail is None else f"{self._message}: {detail}"
        self._logger.log(
            self._level, "%s (%d since the last such line)", text, self._count, **extra
        )
        self._count = 0
        self._logged_at = now
