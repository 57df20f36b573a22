"""Scan benchmark: a wiki of 20,000 page files through ``trendbot poll``'s code path.

A quarter of the files are Korean translations of an English page (``x.en.md`` and
``x.ko.md``: one page in two languages), so 20,000 files are 15,000 pages.

Measures, in one run on one SQLite database: the first scan (baseline), an unchanged
rescan, and a rescan after 100 pages changed; and the peak RSS of the process.

With ``--git`` the wiki is a git repository served over git's smart HTTP on 127.0.0.1
(``git http-backend``, as the tests serve it) and the source is
``git+http://127.0.0.1:PORT/wiki.git@main``: the first scan clones and reads every page,
an unchanged rescan is one fetch, and the 100 changed pages are one commit.

    .venv/bin/python bench/scan.py [--pages 20000] [--database-url URL] [--git]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store.engine import create_engine, upgrade

TAGS = [
    "rl",
    "reasoning",
    "post-training",
    "agentic-rl",
    "robotics",
    "vision",
    "efficiency",
    "safety",
    "multimodal",
    "exploration",
    "distillation",
    "alignment",
    "long-context",
]
WORDS = [
    "policy",
    "reward",
    "model",
    "token",
    "agent",
    "sample",
    "gradient",
    "rollout",
    "verifier",
    "benchmark",
    "context",
    "memory",
    "latency",
    "budget",
    "scaling",
    "curriculum",
]


def page_text(i: int, *, lang: str, revision: int = 0) -> str:
    rng = random.Random(i * 7 + revision)
    tags = ", ".join(rng.sample(TAGS, 3))
    tldr = " ".join(rng.choice(WORDS) for _ in range(70))
    body = "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(120)) for _ in range(6))
    return (
        f'---\ntitle: "Paper {i} revision {revision}"\ntype: paper\narxiv: "26{i:08d}"\n'
        f"created: 2026-08-01\nupdated: 2026-08-{1 + revision:02d}\ntags: [{tags}]\n"
        f"lang: {lang}\n---\n\n## TL;DR\n\n{tldr}\n\n## Method\n\n{body}\n"
    )


def page_path(root: Path, i: int, *, lang: str) -> Path:
    """Where page ``i`` in ``lang`` is: ``papers/<year>/<arxiv>-paper-<i>.<lang>.md``."""
    return root / "papers" / str(2020 + i % 7) / f"26{i:08d}-paper-{i}.{lang}.md"


def build(root: Path, files: int) -> None:
    """``files`` page files; every fourth is the Korean translation of the page before it,
    so a quarter of the files are translations (same key, ``.ko.md``)."""
    for i in range(files):
        page, lang = (i - 1, "ko") if i % 4 == 3 else (i, "en")
        path = page_path(root, page, lang=lang)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page_text(page, lang=lang))


def change(root: Path, count: int) -> None:
    """A new revision of the English text of ``count`` pages (every tenth)."""
    for i in range(0, count * 10, 10):
        page_path(root, i, lang="en").write_text(page_text(i, lang="en", revision=1))


async def measure(pages: int, database_url: str | None, *, git: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "wiki"
        started = time.perf_counter()
        build(root, pages)
        built = time.perf_counter() - started
        print(f"built {pages} page files ({pages // 4} translations) in {built:.1f} s")
        engine = create_engine(database_url or f"sqlite+aiosqlite:///{tmp}/bench.db")
        await upgrade(engine)
        http = make_feed_client()
        async with contextlib.AsyncExitStack() as stack:
            source = str(root)
            if git:
                from tests.fakes.git_server import GitServer, git_commit_all

                server_root = Path(tmp) / "server"
                server_root.mkdir()
                git_commit_all(root, server_root / "wiki.git", message="20,000 pages")
                server = await stack.enter_async_context(GitServer(server_root))
                source = f"git+{server.base_url}/wiki.git@main"

                def prepare_change() -> None:
                    change(root, 100)
                    git_commit_all(root, server_root / "wiki.git", message="100 pages")
            else:

                def prepare_change() -> None:
                    change(root, 100)

            poller = Poller(
                engine=engine,
                sources=[source],
                base_url=None,
                default_lang="en",
                http=http,
                data_dir=Path(tmp) / "data",
            )
            figures = {}
            for label, prepare in (
                ("first scan", None),
                ("unchanged rescan", None),
                ("rescan, 100 pages changed", prepare_change),
            ):
                if prepare:
                    prepare()
                started = time.perf_counter()
                summary = await poller.poll()
                figures[label] = time.perf_counter() - started
                print(f"{label:28s} {figures[label]:7.2f} s   {summary.line()}")
        await http.aclose()
        await engine.dispose()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'peak RSS':28s} {peak_mb:7.0f} MB")
    print(
        f"machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {_cpus()} cores"
    )


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000, help="page files to write")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--git", action="store_true", help="serve the wiki as a git repository")
    args = parser.parse_args()
    asyncio.run(measure(args.pages, args.database_url, git=args.git))


if __name__ == "__main__":
    main()
