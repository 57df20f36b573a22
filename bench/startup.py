"""How long the one-shot commands take, wall clock, from process start to exit.

Runs each command ROUNDS times in a fresh process (the first `subscribers` creates the
database and is reported on its own) and prints the median and the spread::

    .venv/bin/python bench/startup.py [--rounds 10]

Besides the wall times it prints how many modules each command imported, the figure that
lazy imports change and that does not drift with the machine's load.

The project's modules are compiled to bytecode first, as an installed package has them (pip
compiles a wheel's modules as it installs them; the container image is built so). Without
that, a checkout run with ``PYTHONDONTWRITEBYTECODE`` set compiles every module it imports
again in each process: about 40 ms of ``subscribers``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRENDBOT = [sys.executable, "-m", "bot"]


def _env(database: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_"))}
    env["DATABASE_URL"] = f"sqlite+aiosqlite:///{database}"
    env["WIKI_SOURCES"] = str(ROOT / "bot" / "sample_wiki")
    return env


def _time(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([*TRENDBOT, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _modules(args: list[str], env: dict[str, str]) -> int:
    probe = (
        "import sys, runpy; sys.argv = ['trendbot', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('bot', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(len(sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return int(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    rounds = parser.parse_args().rounds
    compileall.compile_dir(ROOT / "bot", quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(Path(tmp) / "trendbot.db")
        first = _time(["subscribers"], env)
        print(f"subscribers, creating the database: {first:.3f} s")
        for label, args in (
            ("--help", ["--help"]),
            ("subscribers (empty database)", ["subscribers"]),
            ("db upgrade (schema current)", ["db", "upgrade"]),
        ):
            times = sorted(_time(args, env) for _ in range(rounds))
            print(
                f"{label}: median {statistics.median(times):.3f} s "
                f"(min {times[0]:.3f}, max {times[-1]:.3f}, {rounds} runs), "
                f"{_modules(args, env)} modules imported"
            )


if __name__ == "__main__":
    main()
