"""The checks of one setting's value, and the one line a bad value is told in.

Pure: :mod:`bot.settings` applies them to its variables, and the commands take a chat's
own values (a digest time) by the same rules.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from bot.errors import ConfigError

SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")
# A database host: a name or an IPv4 address (RFC 1123), or an IPv6 address (with a zone).
DATABASE_HOST_RE = re.compile(r"[A-Za-z0-9._-]{1,253}|[0-9A-Fa-f:.]{2,45}(%[A-Za-z0-9_.-]{1,64})?")


def split_csv(value: Any) -> Any:
    """A comma-separated variable as a tuple of its non-blank parts; any other value as is."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def split_user_ids(value: Any, *, pattern: re.Pattern[str], refusal: str) -> Any:
    """An admin-ids variable (``TELEGRAM_ADMIN_IDS``...) as a tuple of ids, each matching the
    platform's ``pattern`` whole; raises ValueError naming the first that does not, then
    ``refusal`` (what an id of that platform looks like). Any other value as is."""
    value = split_csv(value)
    if isinstance(value, tuple):
        for item in value:
            if not pattern.fullmatch(str(item)):
                raise ValueError(f"{item!r} is not {refusal}")
    return value


def check_database_url(value: str) -> str:
    """``value`` when it is a database URL of a supported driver; raises ValueError saying
    what is wrong (never quoting the URL, which may hold a password) otherwise."""
    try:
        url = make_url(value)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise ValueError(
            "is not a database URL; use sqlite+aiosqlite:///PATH "
            "or postgresql+asyncpg://USER@HOST:PORT/DB"
        ) from None
    if url.drivername not in SUPPORTED_DRIVERS:
        raise ValueError(
            f"driver {url.drivername!r} is not supported; use one of "
            + ", ".join(SUPPORTED_DRIVERS)
        )
    if url.host is not None and not DATABASE_HOST_RE.fullmatch(url.host):
        # Said without the host itself: a malformed URL may have split the password there.
        raise ValueError(
            "has a malformed host; use postgresql+asyncpg://USER:PASSWORD@HOST:PORT/DB "
            "(an IPv6 address in brackets, a password's @, : or / as %40, %3A, %2F)"
        )
    if url.port is not None and not 1 <= url.port <= 65535:
        raise ValueError("has a port out of range; a port is 1-65535")
    return value


def check_http_url(value: str) -> str:
    """``value`` when it is an http(s) URL with a host; raises ValueError otherwise."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// URL")
    return value


# Hosts a development deployment may serve plain http:// on (the URL leaves no machine).
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def check_public_base_url(value: str) -> str:
    """The bot's public base: ``https://host[:port][/path]``, or ``http://`` on localhost for
    development; no query or fragment. Returned without a trailing slash."""
    try:
        parts = urlsplit(value.strip())
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        host = None
    if not host or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("must be an https:// URL such as https://bot.example.com")
    if parts.scheme != "https" and not (parts.scheme == "http" and host in LOCAL_HOSTS):
        raise ValueError("must be https:// (http:// only for localhost, in development)")
    return value.strip().rstrip("/")


def parse_hhmm(value: str) -> dt.time:
    """``HH:MM`` (24-hour) to a time; raises ValueError otherwise."""
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", value.strip())
    if not match or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError("must be a 24-hour time HH:MM, e.g. 09:00")
    return dt.time(int(match[1]), int(match[2]))


def config_error(exc: ValidationError) -> ConfigError:
    """The first error of ``exc`` as one line: the variable as the operator spells it, and
    what is wrong with it."""
    error = exc.errors(include_url=False, include_input=False)[0]
    message = str(error.get("msg", "is not valid"))
    message = message.removeprefix("Value error, ")
    if error["loc"]:
        variable = str(error["loc"][0]).upper()
    else:  # model-level check: the message starts with the variable's name
        variable, _, message = message.partition(": ")
    if error["type"] == "literal_error":
        message = "must be " + message.removeprefix("Input should be ")
    elif error["type"] in ("int_parsing", "float_parsing"):
        message = "must be a number"
    elif message.startswith("Input should be"):
        message = "must be" + message.removeprefix("Input should be")
    return ConfigError(variable, message)
