"""Pure parts of the HTTP server's bounds and of the start-up error lines."""

from __future__ import annotations

import resource
import socket
import sqlite3

import pytest
from sqlalchemy.exc import OperationalError

from bot.ops.web import MAX_CONNECTIONS, MIN_CONNECTIONS, connection_limit
from bot.store import reach

PASSWORD = "p@ss:w/rd"
URL = "postgresql+asyncpg://bot:p%40ss%3Aw%2Frd@db.internal:6543/trendbot"


@pytest.mark.parametrize(
    ("descriptors", "limit"),
    [
        (resource.RLIM_INFINITY, MAX_CONNECTIONS),
        (1_048_576, MAX_CONNECTIONS),
        (65_536, MAX_CONNECTIONS),
        (1024, 512),
        (256, 128),
        (12, MIN_CONNECTIONS),
        (0, MIN_CONNECTIONS),
    ],
)
def test_connection_limit_is_half_the_descriptors_within_bounds(
    descriptors: int, limit: int
) -> None:
    assert connection_limit(descriptors) == limit


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (ConnectionRefusedError(111, "Connect call failed"), "connection refused"),
        (socket.gaierror(-2, "Name or service not known"), "does not resolve"),
        (TimeoutError(), "no answer in time"),
        (OSError(113, "No route to host"), "No route to host"),
        (
            OperationalError(
                "connect", {}, sqlite3.OperationalError("unable to open database file")
            ),
            "unable to open database file",
        ),
        (OSError(13, f"Permission denied: {PASSWORD}"), "Permission denied: ***"),
    ],
)
def test_a_database_failure_is_one_line_with_the_host_and_never_the_password(
    error: BaseException, words: str
) -> None:
    line = reach.failure(URL, error)
    assert line is not None
    assert line.startswith("cannot open the database at db.internal:6543/trendbot: ")
    assert words in line and "\n" not in line
    assert PASSWORD not in line and "p%40ss" not in line


def test_a_failure_wrapped_by_another_is_found_through_its_cause() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "refused")
        except OSError as inner:
            raise RuntimeError("while migrating") from inner
    except RuntimeError as outer:
        assert "connection refused" in (reach.failure(URL, outer) or "")


def test_an_error_that_is_not_about_the_database_is_left_to_show_in_full() -> None:
    assert reach.failure(URL, ValueError("a bug")) is None
    assert reach.failure(URL, KeyError("x")) is None
