"""Database errors that mean "the database is away for now", and their one-line account.

An outage (PostgreSQL stopped or restarted, its connections cut, a SQLite file that cannot
be written, a full disk) raises driver errors from every layer: SQLAlchemy's
``OperationalError`` and ``InterfaceError``, its pool's timeout, and ``OSError`` from a
connect that was refused. The service waits them out and tries again; a one-shot command
says what failed in one line and exits 1. A constraint violation or a bad statement is not
an outage: it is a bug, and is raised as it is.
"""

from __future__ import annotations

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

# An error's text in the one-line account is cut to this: a driver's message may quote a
# whole statement.
MAX_REASON_CHARS = 200


def is_outage(exc: BaseException) -> bool:
    """True for an error that the database's being away (or full) explains, and that the
    same work may succeed after once the database answers again."""
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        return isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError)
    # The pool waited in vain for a connection; a connect refused or timed out.
    return isinstance(exc, sa_exc.TimeoutError | OSError | TimeoutError)


def reason(exc: BaseException) -> str:
    """What failed, in the driver's words, on one line and without the statement."""
    orig = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    text = str(orig or exc).strip().splitlines()
    first = text[0].strip() if text else ""
    if not first:
        first = type(orig or exc).__name__
    return first[:MAX_REASON_CHARS]


def where(database_url: str) -> str:
    """The database named as a line may name it: ``host:port/name`` for a server, the file
    for SQLite; never the user's password."""
    try:
        url = make_url(database_url)
    except (ArgumentError, ValueError):  # refused by the settings before any line names it
        return "the database"
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    host = url.host or "the local socket"
    port = f":{url.port}" if url.port else ""
    return f"{host}{port}/{url.database or ''}"


def describe(exc: BaseException, *, database_url: str) -> str:
    """One line for an operator: which database, and what failed."""
    return f"database error: {where(database_url)}: {reason(exc)}"
