"""Database errors that mean "the database is away for now", and their one-line account.

An outage (PostgreSQL stopped or restarted, its connections cut, a SQLite file that cannot
be written, a full disk) raises driver errors from every layer: SQLAlchemy's
``OperationalError`` and ``InterfaceError``, its pool's timeout, ``OSError`` from a
connect that was refused, and PostgreSQL's own refusals, which carry a SQLSTATE and reach
the caller either as SQLAlchemy's ``DatabaseError`` (from a statement) or as the driver's
exception itself (from a connect, which SQLAlchemy does not wrap). The service waits them
out and tries again; a one-shot command says what failed in one line and exits 1. A
constraint violation or a bad statement is not an outage: it is a bug, and is raised as it
is.

Every caller asks :func:`is_outage`: this is the one place the rule lives.
"""

from __future__ import annotations

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

# An error's text in the one-line account is cut to this: a driver's message may quote a
# whole statement.
MAX_REASON_CHARS = 200

# PostgreSQL's SQLSTATEs (Appendix A, "PostgreSQL Error Codes") that say the server is away
# or refusing for now, not that the statement is wrong: the same work succeeds once it
# answers again.
OUTAGE_SQLSTATE_CLASSES = frozenset({"08"})  # connection exception: every code of the class
OUTAGE_SQLSTATES = frozenset(
    {
        "57P01",  # admin_shutdown: "terminating connection due to administrator command"
        "57P02",  # crash_shutdown: another backend crashed, the server restarts
        "57P03",  # cannot_connect_now: "the database system is shutting down" / "starting up"
        "57P05",  # idle_session_timeout: the server closed an idle connection
        "53100",  # disk_full: "could not extend file ... No space left on device"
        "53200",  # out_of_memory
        "53300",  # too_many_connections
        # read_only_sql_transaction: the server became a standby (a failover) or the database
        # was set read-only: writes fail and reads answer, as on a full disk.
        "25006",
        # object_not_in_prerequisite_state: "database ... is not currently accepting
        # connections" (ALLOW_CONNECTIONS false). SQLAlchemy's asyncpg adapter raises it as an
        # OperationalError from a statement too, which the class rule below takes as one.
        "55000",
    }
)


def is_outage(exc: BaseException) -> bool:
    """True for an error that the database's being away (or full) explains, and that the
    same work may succeed after once the database answers again."""
    state = sqlstate(exc)
    if state is not None and (state[:2] in OUTAGE_SQLSTATE_CLASSES or state in OUTAGE_SQLSTATES):
        return True
    # Otherwise by SQLAlchemy's class of it: an OperationalError (a deadlock, a serialization
    # failure: the same work succeeds when tried again) or a connection that broke.
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        return isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError)
    # The pool waited in vain for a connection; a connect refused or timed out.
    return isinstance(exc, sa_exc.TimeoutError | OSError | TimeoutError)


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE PostgreSQL gave the error, or None (SQLite, a refused connect, a bug).

    asyncpg's exceptions carry it as ``sqlstate``; SQLAlchemy's wrapper of one keeps the
    driver's error as ``orig`` (which has it too) and as its cause.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        state = getattr(current, "sqlstate", None)
        if isinstance(state, str) and len(state) == 5:
            return state
        orig = getattr(current, "orig", None)
        current = orig if isinstance(orig, BaseException) else current.__cause__
    return None


def reason(exc: BaseException) -> str:
    """What failed, in the driver's words, on one line and without the statement."""
    orig = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    cause = orig.__cause__ if orig is not None else None
    if cause is not None and type(cause).__module__.startswith("asyncpg"):
        # asyncpg's error as SQLAlchemy's adapter re-raised it ("<class '...'>: text"), with
        # or without a SQLSTATE ("connection is closed" has none): the driver's own words
        # are its cause's.
        orig = cause
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
