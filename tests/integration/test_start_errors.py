"""``trendbot run`` that cannot start says why in one line on stderr, without a traceback
and without the database password: exit 2 for a bad value (a malformed ``DATABASE_URL``,
an HTTP port already taken), exit 1 for a database that cannot be reached or opened."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.errors import ConfigError
from bot.settings import load_settings
from tests.cli import refusal, run_cli
from tests.conftest import Settings
from tests.ports import free_port

PASSWORD = "Sekr3t-pw"

MALFORMED_URLS = [
    f"postgresql+asyncpg://u:{PASSWORD}@[bad/db",  # an IPv6 bracket left open
    f"postgresql+asyncpg://u:{PASSWORD}@bad]/db",
    f"postgresql+asyncpg://u:{PASSWORD}@ho st/db",  # a space in the host
    f"postgresql+asyncpg://u:p@{PASSWORD}@host/db",  # an unquoted @ in the password
    f"postgresql+asyncpg://u:{PASSWORD}@host:99999/db",  # a port out of range
    f"postgresql+asyncpg://u:{PASSWORD}@host:port/db",  # a port that is not a number
    f"postgresql+asyncpg://u:{PASSWORD}@fe80::1/db",  # IPv6 without brackets
]


@pytest.fixture
def env(clean_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    (tmp_path / "wiki").mkdir()
    return dict(clean_env, WIKI_SOURCES=str(tmp_path / "wiki"), HTTP_PORT="0")


@pytest.mark.parametrize("url", MALFORMED_URLS)
def test_a_malformed_database_url_is_one_line_naming_it(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(Settings, database_url=url)
    assert caught.value.variable == "DATABASE_URL"
    assert PASSWORD not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+asyncpg://u:pw@[::1]:5432/db",
        "postgresql+asyncpg://u:pw@db.example.org:5432/db",
        "postgresql+asyncpg://u:pw@10.0.0.7/db",
        "postgresql+asyncpg://u@/db?host=/run/postgresql",
        "postgresql+asyncpg://u:p%40w@host/db",
        "sqlite+aiosqlite:///./data/trendbot.db",
    ],
)
def test_a_well_formed_database_url_is_accepted(url: str) -> None:
    assert load_settings(Settings, database_url=url).database_url == url


@pytest.mark.slow
def test_run_with_a_malformed_database_url_says_so_in_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    result = run_cli("run", env=dict(env, DATABASE_URL=MALFORMED_URLS[0]), cwd=tmp_path)
    line = refusal(result)
    assert line.startswith("configuration error: DATABASE_URL: "), line
    assert PASSWORD not in result.stderr + result.stdout


@pytest.mark.slow
def test_run_with_an_unreachable_database_says_which_host_in_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql+asyncpg://bot:{PASSWORD}@127.0.0.1:{port}/trendbot"
    result = run_cli("run", env=dict(env, DATABASE_URL=url), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"127.0.0.1:{port}" in lines[0] and "refused" in lines[0], lines[0]
    assert PASSWORD not in result.stderr + result.stdout


@pytest.mark.slow
def test_run_with_an_unopenable_sqlite_file_says_so_in_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "not-a-directory").write_text("")
    url = f"sqlite+aiosqlite:///{tmp_path}/not-a-directory/trendbot.db"
    result = run_cli("run", env=dict(env, DATABASE_URL=url), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "not-a-directory" in lines[0], lines[0]


@pytest.fixture
def postgres_base() -> Iterator[str]:
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        pytest.skip("needs TEST_DATABASE_URL")
    yield base


@pytest.mark.slow
@pytest.mark.postgres
def test_run_with_a_missing_database_or_role_says_so_in_one_line(
    env: dict[str, str], tmp_path: Path, postgres_base: str
) -> None:
    from sqlalchemy.engine import make_url

    base = make_url(postgres_base)
    for url, words in [
        (base.set(database="trendbot_no_such_db", password=PASSWORD), "does not exist"),
        (base.set(username="trendbot_no_such_role", password=PASSWORD), "does not exist"),
    ]:
        shown = url.render_as_string(hide_password=False)
        result = run_cli("run", env=dict(env, DATABASE_URL=shown), cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert f"{base.host}:{base.port}" in lines[0] and words in lines[0], lines[0]
        assert PASSWORD not in result.stderr + result.stdout


@pytest.mark.slow
def test_run_on_a_port_in_use_names_http_port_in_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(
            "run",
            env=dict(
                env,
                DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
                HTTP_HOST="127.0.0.1",
                HTTP_PORT=str(port),
            ),
            cwd=tmp_path,
        )
    line = refusal(result)
    assert line.startswith("configuration error: HTTP_PORT: "), line
    assert str(port) in line


@pytest.mark.slow
def test_run_on_a_host_not_of_this_machine_names_http_host_in_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    result = run_cli(
        "run",
        env=dict(
            env,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
            HTTP_HOST="192.0.2.1",  # TEST-NET-1 (RFC 5737): on no machine; nothing is sent
        ),
        cwd=tmp_path,
    )
    line = refusal(result)
    assert line.startswith("configuration error: HTTP_HOST: "), line


def test_a_reader_that_stops_reading_is_no_database_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    """``trendbot stats --json | head``: the pipe closes before the output is written; the
    command says nothing of a database, and prints no traceback."""
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bot", "stats", "--json"],
            stdout=write,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    # Nothing is said but that the database was made (the directory had none).
    lines = done.stderr.decode().splitlines()
    said = [line for line in lines if "created a new database" not in line]
    assert said == [] and done.returncode == 1, said
