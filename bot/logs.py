"""Logging: text or one JSON object a line, with every configured secret redacted."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sys
from collections.abc import Iterable
from typing import Any, TextIO

# The keys every JSON line has, in this order; values absent from a record are null.
JSON_KEYS = ("time", "level", "logger", "event", "chat", "platform", "page", "error")
REDACTED = "[redacted]"
# A Telegram bot token anywhere in a URL or message (the library logs request URLs).
TELEGRAM_TOKEN_IN_TEXT = re.compile(r"\b\d{5,20}:[A-Za-z0-9_-]{30,}\b")
SLACK_TOKEN_IN_TEXT = re.compile(r"\bxox[abepr]-[A-Za-z0-9-]+|\bxapp-[A-Za-z0-9-]+")
# A Slack OAuth code (digits.digits.hex, in the redirect's query and oauth.v2.access's body).
SLACK_OAUTH_CODE_IN_TEXT = re.compile(r"\b\d{4,}\.\d{4,}\.[0-9a-f]{16,}\b")
# A chat's private feed address (a reply carries it; the libraries log requests at DEBUG).
FEED_TOKEN_IN_TEXT = re.compile(r"/feeds/[A-Za-z0-9_-]{43}\.atom")


class Redactor(logging.Filter):
    """Replaces every secret in a record's final message and exception text."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        text = TELEGRAM_TOKEN_IN_TEXT.sub(REDACTED, text)
        text = FEED_TOKEN_IN_TEXT.sub(f"/feeds/{REDACTED}.atom", text)
        text = SLACK_OAUTH_CODE_IN_TEXT.sub(REDACTED, text)
        return SLACK_TOKEN_IN_TEXT.sub(REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        message = self.redact(record.getMessage())
        record.msg, record.args = message, None
        if record.exc_info:
            formatter = logging.Formatter()
            record.exc_text = self.redact(formatter.formatException(record.exc_info))
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
        return json.dumps(data, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        context = [
            f"{key}={getattr(record, key)}"
            for key in ("platform", "chat", "page", "error")
            if getattr(record, key, None) is not None
        ]
        return f"{line} [{' '.join(context)}]" if context else line


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
    # The HTTP clients log every request URL at INFO/DEBUG, and Telegram's URLs hold the
    # token: the redactor covers them, and they are quiet below WARNING unless DEBUG.
    quiet = logging.DEBUG if level == "DEBUG" else logging.WARNING
    for name in (
        "httpx",
        "httpcore",
        "apscheduler",
        "aiohttp.access",
        "telegram",
        "slack_bolt",
        "alembic",
    ):
        logging.getLogger(name).setLevel(max(quiet, logging.getLevelName(level)))
