"""A git source against a hostile repository or server: a blob too large to read, a tree
bomb, a server that never answers, a SIGTERM during a hung fetch, redirects to another
host, and what the public ``/healthz`` says of a failure."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.errors import SourceError
from bot.sources.feed import make_feed_client
from bot.sources.git import MAX_GIT_PAGE_FILES, GitRepository, clone_directory
from bot.sources.pages import MAX_PAGE_BYTES
from bot.sources.poll import Poller
from tests.cli import start_cli
from tests.fakes.git_server import GitServer, SilentServer, Wiki
from tests.integration.test_ops import wait_healthy
from tests.ports import free_port
from tests.waiting import wait_until

STOP_BOUND_SECONDS = 15.0  # docs/operating.md: SIGTERM stops `run` within 15 s in all


def page(title: str, *, tldr: str = "A short summary.") -> str:
    return f"---\ntitle: {title}\ntags: [rl]\n---\n\n## TL;DR\n\n{tldr}\n"


def repository(url: str, tmp_path: Path, **kwargs: object) -> GitRepository:
    source = f"git+{url}@main#subdirectory=wiki"
    return GitRepository(
        source,
        directory=clone_directory(tmp_path / "data", source),
        **kwargs,  # type: ignore[arg-type]
    )


async def scan(repo: GitRepository):  # type: ignore[no-untyped-def]
    return await asyncio.to_thread(repo.scan, base_url=None, default_lang="en")


def git_processes(*needles: str) -> list[str]:
    """The command lines of the live (not zombie) processes that name any of ``needles``:
    a git of the bot's names its clone (``--git-dir``), a helper the server's address."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(needle in cmdline for needle in needles):
            found.append(f"{entry.name} {cmdline}")
    return found


@pytest.fixture
async def wiki(tmp_path: Path) -> Wiki:
    root = tmp_path / "server"
    root.mkdir()
    return Wiki(root, tmp_path / "work")


# --- a blob larger than a page: its size is learnt, its bytes never read --------------


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_blob_over_the_page_cap_is_never_read(
    wiki: Wiki, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    huge = 48 * 1024 * 1024
    at_cap = page("At the cap")
    wiki.write("wiki/papers/at-cap.md", at_cap + "x" * (MAX_PAGE_BYTES - len(at_cap)))
    wiki.write_bytes("wiki/papers/over.md", b"y" * (MAX_PAGE_BYTES + 1))
    wiki.write_bytes("wiki/papers/huge.md", b"z" * huge)
    wiki.write("wiki/papers/small.md", page("Small"))
    wiki.commit("pages and two blobs too large to be pages")
    async with GitServer(wiki.bare.parent) as server:
        repo = repository(f"{server.base_url}/wiki.git", tmp_path)
        caplog.set_level(logging.WARNING, logger="bot.sources")
        tracemalloc.start()
        try:
            found = await scan(repo)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert {p.key for p in found.pages} == {"papers/at-cap", "papers/small"}
    assert {(s.path, s.reason) for s in found.skipped} == {
        ("papers/over.md", f"file larger than 1 MB ({MAX_PAGE_BYTES + 1} bytes)"),
        ("papers/huge.md", f"file larger than 1 MB ({huge} bytes)"),
    }
    # What the poll held: the page at the cap and little else, never the 48 MB blob (read
    # whole, it alone would be a peak of 48 MB and more).
    assert peak < 8 * 1024 * 1024, peak
    lines = [r.getMessage() for r in caplog.records if "huge.md" in r.getMessage()]
    assert lines == [
        f"git+{server.base_url}/wiki.git@main#subdirectory=wiki: skipped papers/huge.md: "
        f"file larger than 1 MB ({huge} bytes), not read"
    ]


# --- a tree bomb: the listing stops at the cap, the source goes on -----------------------


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_a_tree_bomb_is_cut_at_the_cap_and_the_source_moves_on(
    wiki: Wiki, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folders = MAX_GIT_PAGE_FILES // 1000 + 5  # 30 folders x 1,000 pages: 30,000 paths
    wiki.tree_bomb(folders=folders, pages=1000, text=page("Bomb"))
    async with GitServer(wiki.bare.parent) as server:
        repo = repository(f"{server.base_url}/wiki.git", tmp_path)
        caplog.set_level(logging.WARNING, logger="bot.sources")
        started = time.monotonic()
        found = await scan(repo)
        took = time.monotonic() - started
        assert len(found.present_keys) == MAX_GIT_PAGE_FILES
        assert len(found.pages) == MAX_GIT_PAGE_FILES
        assert min(found.present_keys) == "d00000/p00000"  # the first by path are kept
        capped = [r.getMessage() for r in caplog.records if "page files" in r.getMessage()]
        assert capped == [
            f"git+{server.base_url}/wiki.git@main#subdirectory=wiki: more than "
            f"{MAX_GIT_PAGE_FILES} page files (or {8 * MAX_GIT_PAGE_FILES} files) in the tree: "
            f"the first {MAX_GIT_PAGE_FILES} by path are kept, the rest left out"
        ]
        assert took < 45, took  # well within the poll's 60 s a source
        # The source advances: the next poll of the same commit costs one fetch.
        repo.mark_scanned(found.commit)
        again = await scan(repo)
        assert again.unchanged


# --- a server that accepts and never answers: nothing of git is left behind --------------


@pytest.mark.slow
@pytest.mark.timeout(60)
async def test_a_silent_server_leaves_no_git_process_behind(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    async with SilentServer() as silent:
        source = f"git+{silent.base_url}/wiki.git@main"
        poller = Poller(
            engine=engine,
            sources=[source],
            base_url=None,
            default_lang="en",
            http=make_feed_client(),
            source_deadline=3.0,
            data_dir=tmp_path / "data",
        )
        summary = await poller.poll()
        assert silent.accepted.is_set()
        (outcome,) = summary.outcomes
        assert outcome.error == "took longer than 3 s"
        clone = str(clone_directory(tmp_path / "data", source))
        needles = (clone, f"127.0.0.1:{silent.port}")
        # The group is killed at once; the kernel takes a moment.
        await wait_until(
            lambda: git_processes(*needles) == [],
            what=lambda: f"no git process left; there are {git_processes(*needles)}",
        )


@pytest.mark.slow
@pytest.mark.timeout(90)
async def test_sigterm_during_a_hung_fetch_stops_run_within_the_bound(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    port = free_port()
    async with SilentServer() as silent:
        env = dict(
            clean_env,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/data/trendbot.db",
            WIKI_SOURCES=f"git+{silent.base_url}/wiki.git@main",
            HTTP_PORT=str(port),
        )
        log = tmp_path / "run.log"
        process = start_cli(env=env, cwd=tmp_path, out=log, err=log)
        try:
            async with httpx.AsyncClient(timeout=10) as client:
                await wait_healthy(client, f"http://127.0.0.1:{port}/healthz", process)
            await asyncio.wait_for(silent.accepted.wait(), timeout=30)  # the fetch hangs
            await asyncio.sleep(0.5)  # the fetch hangs a while before the stop
            process.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            code = await asyncio.to_thread(process.wait, 60)
            took = time.monotonic() - signalled
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert code == 0, log.read_text()[-3000:]
        assert took < STOP_BOUND_SECONDS, took
        assert git_processes(f"127.0.0.1:{silent.port}", str(tmp_path / "data" / "git")) == []
        assert "Traceback" not in log.read_text()


# --- redirects: the feeds' policy; /healthz says why in a public word ---------------------


@pytest.fixture
async def moved(wiki: Wiki) -> AsyncIterator[tuple[GitServer, GitServer]]:
    """``wiki.git`` served on 127.0.0.2; 127.0.0.1 redirects ``/moved.git`` there, and
    ``/here.git`` to its own ``/wiki.git`` on 127.0.0.2 too."""
    wiki.write("wiki/papers/a.md", page("A"))
    wiki.commit("a")
    async with GitServer(wiki.bare.parent, host="127.0.0.2") as other:
        redirects = {"/moved.git": f"{other.base_url}/wiki.git"}
        async with GitServer(wiki.bare.parent, redirects=redirects) as first:
            first.redirects["/same.git"] = f"{first.base_url}/wiki.git"
            yield first, other


@pytest.mark.slow
async def test_a_redirect_to_another_host_is_refused_as_a_feeds_is(
    moved: tuple[GitServer, GitServer], tmp_path: Path
) -> None:
    first, other = moved
    repo = repository(f"{first.base_url}/moved.git", tmp_path)
    with pytest.raises(SourceError) as refused:
        await scan(repo)
    assert refused.value.reason == "git fetch: redirect refused"
    assert refused.value.detail is not None
    assert "FEED_ALLOW_CROSS_HOST_REDIRECTS=true allows it" in refused.value.detail
    assert other.requests == []  # never asked


@pytest.mark.slow
async def test_a_redirect_the_policy_allows_is_followed(
    moved: tuple[GitServer, GitServer], tmp_path: Path
) -> None:
    first, other = moved
    same = repository(f"{first.base_url}/same.git", tmp_path / "same")
    assert {p.key for p in (await scan(same)).pages} == {"papers/a"}
    assert any("/wiki.git/" in r for r in first.requests)
    allowed = repository(f"{first.base_url}/moved.git", tmp_path / "other", allow_cross_host=True)
    assert {p.key for p in (await scan(allowed)).pages} == {"papers/a"}
    assert any("git-upload-pack" in r for r in other.requests)


@pytest.mark.slow
@pytest.mark.timeout(90)
async def test_healthz_shows_a_public_reason_and_the_log_gits_text(
    moved: tuple[GitServer, GitServer], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    first, _other = moved
    port = free_port()
    redirected = f"git+{first.base_url.replace('://', '://reader:s3cret-pass@')}/moved.git@main"
    unreachable = "git+http://127.0.0.1:9/wiki.git@main"
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/data/trendbot.db",
        WIKI_SOURCES=f"{redirected},{unreachable}",
        HTTP_PORT=str(port),
    )
    log = tmp_path / "run.log"
    process = start_cli(env=env, cwd=tmp_path, out=log, err=log)
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            await wait_healthy(client, f"http://127.0.0.1:{port}/healthz", process)
            await wait_until(
                lambda: "poll finished" in log.read_text(), seconds=40, what="the first poll"
            )
            health = (await client.get(f"http://127.0.0.1:{port}/healthz")).json()
        process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    errors = {s["name"]: s["error"] for s in health["sources"]}
    assert errors == {
        f"git+{first.base_url}/moved.git@main": "git fetch: redirect refused",
        "git+http://127.0.0.1:9/wiki.git@main": "git fetch: unreachable",
    }
    text = log.read_text()
    assert "127.0.0.2" not in str(health)  # where the redirect led: the log's alone
    assert "redirect to another host (127.0.0.2) refused" in text
    assert "Failed to connect to 127.0.0.1 port 9" in text
    assert "s3cret-pass" not in text + str(health)
    assert "Traceback" not in text


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_trendbot_poll_on_a_tree_bomb_records_the_cap_and_moves_on(
    wiki: Wiki, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    from tests.cli import run_cli_async

    wiki.tree_bomb(folders=MAX_GIT_PAGE_FILES // 1000 + 5, pages=1000, text=page("Bomb"))
    async with GitServer(wiki.bare.parent) as server:
        env = dict(
            clean_env,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/data/trendbot.db",
            WIKI_SOURCES=f"git+{server.base_url}/wiki.git@main#subdirectory=wiki",
        )
        started = time.monotonic()
        first = await run_cli_async("poll", env=env, cwd=tmp_path, seconds=240)
        took = time.monotonic() - started
        assert first.returncode == 0, first.stderr[-2000:]
        assert first.stdout.strip().splitlines()[-1] == (
            f"{MAX_GIT_PAGE_FILES} new, 0 updated, 0 skipped (baseline: nothing queued)"
        )
        assert (first.stdout + first.stderr).count("page files") == 1
        assert took < 60, took
        # The commit was recorded as scanned: the next poll costs one fetch.
        second = await run_cli_async("poll", env=env, cwd=tmp_path, seconds=120)
        assert second.stdout.strip().splitlines()[-1] == "0 new, 0 updated, 0 skipped"


# What `trendbot poll` and the git commands it ran held at their peak, printed last.
MEASURED_POLL = """
import resource, runpy, sys
sys.argv = ["trendbot", "poll"]
try:
    runpy.run_module("bot", run_name="__main__")
finally:
    # The process's own high-water mark (VmHWM): ru_maxrss keeps the peak of the process it
    # was forked from across exec, which a long test run makes large.
    with open("/proc/self/status") as status:
        self_mb = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) // 1024
    git_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    print(f"peak {self_mb} {git_mb}")
"""


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_trendbot_poll_past_a_large_blob_stays_small(
    wiki: Wiki, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    huge = 128 * 1024 * 1024  # a repeated pattern: a pack of a megabyte or two
    (wiki.work / "wiki" / "papers").mkdir(parents=True)
    with (wiki.work / "wiki" / "papers" / "huge.md").open("wb") as file:
        chunk = bytes(range(256)) * 4096
        for _ in range(huge // len(chunk)):
            file.write(chunk)
    wiki.write("wiki/papers/small.md", page("Small"))
    wiki.commit("a page and a blob of 128 MB")
    async with GitServer(wiki.bare.parent) as server:
        env = dict(
            clean_env,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/data/trendbot.db",
            WIKI_SOURCES=f"git+{server.base_url}/wiki.git@main#subdirectory=wiki",
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            MEASURED_POLL,
            env=env,
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=150)
    lines = out.decode().strip().splitlines()
    assert lines[-2] == "1 new, 0 updated, 1 skipped (baseline: nothing queued)", err.decode()
    _, self_mb, git_mb = lines[-1].split()
    # Neither the bot nor git ever holds the blob: git streams a blob over a megabyte
    # (core.bigFileThreshold) and the bot reads only its size. (A child's peak counts the
    # parent's pages it was spawned with: git's own growth is what exceeds the bot's.)
    assert int(self_mb) < 160, lines[-1]  # before this build: 347 MB
    assert int(git_mb) < int(self_mb) + 30, lines[-1]  # git alone: 132 MB before
