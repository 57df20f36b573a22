"""The package as a user installs it: a wheel in a fresh virtual environment, run from a
directory that is not the checkout. The sample wiki and the migrations come with it, and
``.env`` is read from the working directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import pytest

from bot import DISTRIBUTION
from tests.conftest import ROOT
from tests.waiting import still_running, wait_until_sync


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` directory of a fresh venv holding only the wheel built from this checkout.

    The wheel's dependencies are not installed again (that would fetch the world): a
    ``.pth`` file lends the venv this environment's site-packages, after its own, and a
    path line in a ``.pth`` file runs no ``.pth`` of the lent directory, so the editable
    install of the checkout stays out of it.
    """
    work = tmp_path_factory.mktemp("wheel")
    # An sdist first and the wheel from it, as a release is built: nothing of an earlier
    # build left in the checkout (setuptools' build/ keeps deleted files) gets in.
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(work / "dist"), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = (work / "dist").glob("*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", wheel],
        check=True,
        capture_output=True,
        timeout=300,
        env=_env(dict(os.environ)),  # a PYTHONPATH would send pip's install elsewhere
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "zz_lent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def _env(clean_env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in clean_env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_wheel_runs_anywhere(
    installed: Path, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _env(clean_env)
    trendbot = str(installed / "trendbot")

    shown = subprocess.run(
        [trendbot, "--version"], env=env, cwd=elsewhere, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == f"trendbot {version(DISTRIBUTION)}\n"

    where = subprocess.run(
        [str(installed / "python"), "-c", "import bot; print(bot.__file__)"],
        env=env,
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(installed.parent) in where and str(ROOT) not in where

    (elsewhere / ".env").write_text("DATABASE_URL=sqlite+aiosqlite:///./from-dotenv.db\n")
    polled = subprocess.run(
        [trendbot, "poll"], env=env, cwd=elsewhere, capture_output=True, text=True, timeout=120
    )
    assert polled.returncode == 0, polled.stderr
    last = polled.stdout.strip().splitlines()[-1]
    assert last.endswith(" new, 0 updated, 0 skipped (baseline: nothing queued)")
    assert int(last.split()[0]) >= 12  # the sample wiki's pages
    assert (elsewhere / "from-dotenv.db").is_file()  # .env of the working directory

    log = tmp_path / "run.log"
    with log.open("wb") as err:
        run = subprocess.Popen(
            [trendbot, "run"],
            env={**env, "HTTP_PORT": "0", "POLL_INTERVAL_SECONDS": "3600"},
            cwd=elsewhere,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_until_sync(
            lambda: still_running(run, log) and "HTTP server on" in log.read_text(),
            seconds=60,
            what=lambda: "the HTTP server\n" + log.read_text()[-3000:],
        )
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=60)
    text = log.read_text()
    assert run.returncode == 0, text[-3000:]
    assert f"trendbot {version(DISTRIBUTION)} starting" in text.splitlines()[0]
    assert "Traceback" not in text
    assert os.path.exists(elsewhere / "from-dotenv.db")
