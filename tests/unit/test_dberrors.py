"""Which errors are a database outage, and the one line a one-shot command prints for one."""

from __future__ import annotations

import sqlite3

import asyncpg
import pytest
from sqlalchemy import exc as sa_exc

from bot import dberrors


def _wrapped(cls: type[sa_exc.DBAPIError], orig: Exception) -> sa_exc.DBAPIError:
    return cls("UPDATE outbox SET status=?", {}, orig)


@pytest.mark.parametrize(
    ("error", "outage"),
    [
        (
            _wrapped(sa_exc.OperationalError, sqlite3.OperationalError("database or disk is full")),
            True,
        ),
        (
            _wrapped(
                sa_exc.OperationalError,
                sqlite3.OperationalError("attempt to write a readonly database"),
            ),
            True,
        ),
        (_wrapped(sa_exc.InterfaceError, Exception("connection is closed")), True),
        (ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)"), True),
        (sa_exc.TimeoutError("QueuePool limit of size 10 overflow 10 reached"), True),
        (
            _wrapped(sa_exc.IntegrityError, sqlite3.IntegrityError("UNIQUE constraint failed")),
            False,
        ),
        (_wrapped(sa_exc.ProgrammingError, Exception("syntax error")), False),
        (ValueError("a bug"), False),
        (KeyError("a bug"), False),
    ],
)
def test_is_outage(error: BaseException, outage: bool) -> None:
    assert dberrors.is_outage(error) is outage


@pytest.mark.parametrize(
    ("url", "error", "line"),
    [
        (
            "sqlite+aiosqlite:///data/trendbot.db",
            _wrapped(sa_exc.OperationalError, sqlite3.OperationalError("database or disk is full")),
            "database error: data/trendbot.db: database or disk is full",
        ),
        (
            "postgresql+asyncpg://bot:s3cret-pass@db.internal:6432/trendbot",
            ConnectionRefusedError(111, "Connect call failed ('10.0.0.5', 6432)"),
            "database error: db.internal:6432/trendbot: [Errno 111] Connect call failed "
            "('10.0.0.5', 6432)",
        ),
        (
            "postgresql+asyncpg://bot@db/trendbot",
            _wrapped(sa_exc.InterfaceError, Exception("connection is closed\nmore detail")),
            "database error: db/trendbot: connection is closed",
        ),
        ("not a url", OSError(), "database error: the database: OSError"),
    ],
)
def test_describe_is_one_line_without_credentials(
    url: str, error: BaseException, line: str
) -> None:
    described = dberrors.describe(error, database_url=url)
    assert described == line
    assert "\n" not in described and "s3cret" not in described
    assert "UPDATE outbox" not in described  # the statement stays out


# PostgreSQL's refusals as asyncpg raises them from a connect, which SQLAlchemy does not
# wrap: the driver's own classes, each with its SQLSTATE.
@pytest.mark.parametrize(
    ("error", "outage"),
    [
        (asyncpg.exceptions.CannotConnectNowError("the database system is shutting down"), True),
        (asyncpg.exceptions.CannotConnectNowError("the database system is starting up"), True),
        (
            asyncpg.exceptions.ObjectNotInPrerequisiteStateError(
                'database "trendbot" is not currently accepting connections'
            ),
            True,
        ),
        (asyncpg.exceptions.TooManyConnectionsError("sorry, too many clients already"), True),
        (
            asyncpg.exceptions.AdminShutdownError(
                "terminating connection due to administrator command"
            ),
            True,
        ),
        (asyncpg.exceptions.CrashShutdownError("terminating connection"), True),
        (asyncpg.exceptions.ConnectionFailureError("connection failure"), True),
        (asyncpg.exceptions.ClientCannotConnectError("cannot connect"), True),
        (asyncpg.exceptions.ConnectionRejectionError("rejected"), True),
        (asyncpg.exceptions.DiskFullError("could not extend file: No space left"), True),
        (asyncpg.exceptions.InvalidPasswordError("password authentication failed"), False),
        (asyncpg.exceptions.InvalidCatalogNameError('database "x" does not exist'), False),
        (asyncpg.exceptions.UniqueViolationError("duplicate key value"), False),
        (asyncpg.exceptions.UndefinedTableError('relation "outbox" does not exist'), False),
    ],
    ids=lambda v: v.sqlstate if isinstance(v, asyncpg.exceptions.PostgresError) else str(v),
)
def test_postgresql_refusals_from_a_connect_are_outages(error: Exception, outage: bool) -> None:
    assert dberrors.is_outage(error) is outage
    assert dberrors.sqlstate(error) == error.sqlstate  # type: ignore[attr-defined]


def test_an_unwrapped_refusal_is_described_in_the_servers_words() -> None:
    error = asyncpg.exceptions.ObjectNotInPrerequisiteStateError(
        'database "trendbot" is not currently accepting connections'
    )
    line = dberrors.describe(error, database_url="postgresql+asyncpg://bot:pw@db:5432/trendbot")
    assert line == (
        'database error: db:5432/trendbot: database "trendbot" is not currently accepting '
        "connections"
    )


def test_a_closed_connection_of_asyncpg_is_described_without_the_adapter_s_class_name() -> None:
    """SQLAlchemy's asyncpg adapter re-raises the driver's error as "<class '...'>: text";
    a connection asyncpg closed (a server that shut down) has no SQLSTATE to go by."""
    driver = asyncpg.exceptions.InterfaceError("connection is closed")
    adapted = Exception(f"{type(driver)}: connection is closed")
    adapted.__cause__ = driver
    error = _wrapped(sa_exc.InterfaceError, adapted)
    assert dberrors.is_outage(error)
    line = dberrors.describe(error, database_url="postgresql+asyncpg://bot:pw@db:5432/trendbot")
    assert line == "database error: db:5432/trendbot: connection is closed"
