"""What an operator reads when the database cannot be opened at start-up: one line."""

from __future__ import annotations

import socket
import sqlite3
from urllib.parse import quote, quote_plus

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from bot.dberrors import MAX_REASON_CHARS, where


def failure(url: str, exc: BaseException) -> str | None:
    """One line saying which database could not be opened and why, or None when ``exc`` is
    not about reaching or opening the database (then it is a bug to show in full).

    The password of ``url`` is removed from whatever the driver or the server said.
    """
    reason = _reason(exc)
    if reason is None:
        return None
    password = _password(url)
    for secret in {password, quote(password, safe=""), quote_plus(password)} - {""}:
        reason = reason.replace(secret, "***")
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[: MAX_REASON_CHARS - 1] + "…"
    return f"cannot open the database at {where(url)}: {reason}"


def _password(url: str) -> str:
    try:
        return make_url(url).password or ""
    except (ArgumentError, ValueError):
        return ""


def _reason(exc: BaseException) -> str | None:
    for cause in _chain(exc):
        if isinstance(cause, socket.gaierror):
            return f"the host name does not resolve ({cause.strerror})"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused (is the server running, on that port?)"
        if isinstance(cause, TimeoutError):
            return "no answer in time (a firewall, or the wrong host?)"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        if isinstance(cause, sqlite3.Error):
            return str(cause)
        if type(cause).__module__.startswith("asyncpg"):
            # The server's own words: 'password authentication failed for user "bot"',
            # 'database "x" does not exist'.
            return str(cause) or type(cause).__name__
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, the driver's error SQLAlchemy wraps, and their causes, innermost last."""
    seen: list[BaseException] = []
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        if isinstance(current, DBAPIError):
            pending.append(current.orig)
        pending.extend([current.__cause__, current.__context__])
    return seen
