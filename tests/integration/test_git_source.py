"""A wiki in a git repository, served by git's own smart HTTP on 127.0.0.1: what a poll
reads after commits, renames, deletions, a force-push and a rewritten history."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.errors import SourceError
from bot.rules.giturl import is_git, parse_git_url
from bot.sources.git import GitRepository, clone_directory
from tests.fakes.git_server import GitServer, Wiki
from tests.integration.test_backup import mode, umask_022  # noqa: F401 (the fixture)


def page(title: str, *, tags: str = "rl", tldr: str = "A short summary.") -> str:
    return f"---\ntitle: {title}\ntags: [{tags}]\n---\n\n## TL;DR\n\n{tldr}\n"


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[GitServer, Wiki]]:
    root = tmp_path / "server"
    root.mkdir()
    wiki = Wiki(root, tmp_path / "work")
    wiki.write("wiki/papers/2026/2608.1-a.en.md", page("A"))
    wiki.write("wiki/papers/2026/2608.1-a.ko.md", page("가", tags="rl"))
    wiki.write("wiki/papers/2026/2608.2-b.md", page("B", tags="reasoning"))
    wiki.write("README.md", "not a page: outside the subdirectory")
    wiki.commit("first pages", when="2026-12-01T10:00:00Z")
    async with GitServer(root) as server:
        yield server, wiki


def repository(server: GitServer, tmp_path: Path, *, credentials: str = "") -> GitRepository:
    source = (
        f"git+{server.base_url.replace('://', f'://{credentials}')}/wiki.git@main#subdirectory=wiki"
    )
    return GitRepository(source, directory=clone_directory(tmp_path / "data", source))


async def scan(repo: GitRepository):  # type: ignore[no-untyped-def]
    return await asyncio.to_thread(repo.scan, base_url=None, default_lang="en")


@pytest.mark.parametrize(
    ("source", "remote", "ref", "subdirectory"),
    [
        (
            "git+https://host/org/wiki.git@main#subdirectory=wiki",
            "https://host/org/wiki.git",
            "main",
            "wiki",
        ),
        ("git+https://token@host/org/wiki.git", "https://token@host/org/wiki.git", None, ""),
        (
            "git+ssh://git@host/org/wiki.git@v1.2#subdirectory=a/b/",
            "ssh://git@host/org/wiki.git",
            "v1.2",
            "a/b",
        ),
        ("git+file:///srv/wiki.git@main", "file:///srv/wiki.git", "main", ""),
        ("GIT+HTTPS://host/wiki.git", "https://host/wiki.git", None, ""),
        # pip's rule: the revision is all that follows the path's last @, slashes included.
        (
            "git+https://host/org/wiki.git@feature/x#subdirectory=wiki",
            "https://host/org/wiki.git",
            "feature/x",
            "wiki",
        ),
        (
            "git+ssh://git@host/wiki.git@release/2026/12",
            "ssh://git@host/wiki.git",
            "release/2026/12",
            "",
        ),
        (
            "git+https://host/wiki.git#subdirectory=my%20pages",
            "https://host/wiki.git",
            None,
            "my pages",
        ),
    ],
)
def test_pips_url_form_is_taken_apart(
    source: str, remote: str, ref: str | None, subdirectory: str
) -> None:
    url = parse_git_url(source)
    assert (url.remote, url.ref, url.subdirectory) == (remote, ref, subdirectory)
    assert is_git(source)


@pytest.mark.parametrize(
    "source",
    [
        "git+ftp://host/wiki.git",
        "git://host/wiki.git",
        "git+https://host/wiki.git#subdirectory=../etc",
        "git+https://host/wiki.git@--upload-pack=evil",
        "git+https://host",
        "git+https://host/wiki.git@",  # pip: an empty revision is an error
        "git+https://host/wiki.git@a..b",
        "git+https://host/wiki.git@a:b",
        "git+https://host/wiki.git@x.lock",
        "git+https://host/wiki.git@feature/",
        "git+https://host/wiki.git@.hidden",
        "git+https://host/wiki.git@main~1",
        "git+https://host/wiki.git@main^",
        "git+https://host/wiki.git#subdirectory=pa%00pers",
        "git+https://host/wiki.git#subdirectory=pa%0Apers",
        "git+https://host/wiki.git#subdirectory=:(top)",
        "git+https://host/wiki.git#subdirectory=:/",
        "git+https://host/wiki.git#subdirectory=*",
        "git+https://host/wiki.git#subdirectory=pa?ers",
        "git+https://host/wiki.git#subdirectory=a%5Cb",
        "git+https://host/wiki.git#subdirectory=a/%2E%2E/b",
        "git+https://host/wiki.git\n[core]\n\tsshCommand=touch /tmp/x",
        "git+https://host:99999/wiki.git",
    ],
)
def test_malformed_git_urls_are_refused(source: str) -> None:
    with pytest.raises(ValueError):
        parse_git_url(source)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("git+https://host/wiki.git#subdirectory=pa%00pers", "holds a control character"),
        ("git+https://host/wiki.git#subdirectory=:(top)", "must be a folder path"),
        ("git+https://host/wiki.git#subdirectory=*", "must be a folder path"),
        ("git+https://host/wiki.git@", "has an @ with no branch or tag after it"),
        ("git+https://host/wiki.git@a..b", "@a..b is not a valid branch or tag name"),
    ],
)
def test_a_malformed_git_source_stops_start_up_with_one_line(
    source: str, said: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    from tests.cli import run_cli

    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/db.sqlite",
        WIKI_SOURCES=f"{tmp_path},{source}",
    )
    done = run_cli("poll", env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("configuration error: WIKI_SOURCES: ")
    assert said in line
    assert not (tmp_path / "db.sqlite").exists()  # refused before anything was done


@pytest.mark.parametrize(
    ("source", "shown", "secrets"),
    [
        (
            "git+https://user:s3cret-token@host/org/wiki.git@main#subdirectory=w",
            "git+https://host/org/wiki.git@main#subdirectory=w",
            {"s3cret-token"},
        ),
        ("git+https://ghp_T0KEN@host/org/wiki.git", "git+https://host/org/wiki.git", {"ghp_T0KEN"}),
        ("git+ssh://git@host/org/wiki.git", "git+ssh://host/org/wiki.git", set()),
    ],
)
def test_credentials_are_never_shown(source: str, shown: str, secrets: set[str]) -> None:
    from bot.rules.sources import parse_source
    from bot.sources import identify

    (identity,) = identify([source])
    assert identity.name == shown and identity.key == parse_source(source).public
    assert secrets <= set(parse_source(source).credentials.values())
    assert "git" not in parse_source(source).credentials.values()  # a user name, no secret


@pytest.mark.slow
async def test_a_first_scan_reads_every_page_and_a_second_costs_one_fetch(
    served: tuple[GitServer, Wiki], tmp_path: Path
) -> None:
    server, _wiki = served
    repo = repository(server, tmp_path)
    first = await scan(repo)
    assert not first.unchanged
    assert {p.key for p in first.pages} == {"papers/2026/2608.1-a", "papers/2026/2608.2-b"}
    both = next(p for p in first.pages if p.key == "papers/2026/2608.1-a")
    assert {t.lang for t in both.texts} == {"en", "ko"}
    assert first.commit_time.isoformat() == "2026-12-01T10:00:00+00:00"
    repo.mark_scanned(first.commit)
    before = len(server.requests)
    again = await scan(repo)
    assert again.unchanged and again.pages == ()
    assert all("git-upload-pack" in r for r in server.requests[before:])


@pytest.mark.slow
async def test_a_change_a_rename_and_a_deletion(
    served: tuple[GitServer, Wiki], tmp_path: Path
) -> None:
    server, wiki = served
    repo = repository(server, tmp_path)
    repo.mark_scanned((await scan(repo)).commit)

    wiki.write("wiki/papers/2026/2608.2-b.md", page("B", tags="reasoning", tldr="Changed."))
    wiki.write("wiki/papers/2026/2608.3-c.md", page("C"))
    changed = await scan(repo)
    assert {p.key for p in changed.pages} == set()  # nothing committed yet
    wiki.commit("edit b, add c")
    changed = await scan(repo)
    assert {p.key for p in changed.pages} == {"papers/2026/2608.2-b", "papers/2026/2608.3-c"}
    repo.mark_scanned(changed.commit)

    wiki.move("wiki/papers/2026/2608.1-a.en.md", "wiki/papers/2026/2608.1-renamed.en.md")
    wiki.move("wiki/papers/2026/2608.1-a.ko.md", "wiki/papers/2026/2608.1-renamed.ko.md")
    wiki.remove("wiki/papers/2026/2608.3-c.md")
    wiki.commit("rename a, delete c")
    moved = await scan(repo)
    assert moved.renames == (("papers/2026/2608.1-a", "papers/2026/2608.1-renamed"),)
    assert "papers/2026/2608.3-c" not in moved.present_keys
    assert "papers/2026/2608.1-a" not in moved.present_keys
    assert moved.present_keys == {"papers/2026/2608.1-renamed", "papers/2026/2608.2-b"}


@pytest.mark.slow
async def test_a_force_push_and_a_rewritten_history_are_ordinary_changes(
    served: tuple[GitServer, Wiki], tmp_path: Path
) -> None:
    server, wiki = served
    repo = repository(server, tmp_path)
    repo.mark_scanned((await scan(repo)).commit)
    wiki.write("wiki/papers/2026/2608.4-d.md", page("D"))
    wiki.commit("add d")
    repo.mark_scanned((await scan(repo)).commit)
    # The history is squashed into one commit with one page changed: the tree says what
    # changed, whatever happened to the commits.
    wiki.write("wiki/papers/2026/2608.2-b.md", page("B", tags="reasoning", tldr="Rewritten."))
    wiki.rewrite("one commit")
    rewritten = await scan(repo)
    assert {p.key for p in rewritten.pages} == {"papers/2026/2608.2-b"}
    assert len(rewritten.present_keys) == 3


@pytest.mark.slow
async def test_credentials_reach_the_server_and_no_error_shows_them(tmp_path: Path) -> None:
    root = tmp_path / "server"
    root.mkdir()
    wiki = Wiki(root, tmp_path / "work")
    wiki.write("wiki/p.md", page("P"))
    wiki.commit("p")
    async with GitServer(root, credentials=("bot", "t0ken-VALUE")) as server:
        good = repository(server, tmp_path / "good", credentials="bot:t0ken-VALUE@")
        assert {p.key for p in (await scan(good)).pages} == {"p"}
        config = (good.directory / "config").read_text()
        assert (good.directory / "config").stat().st_mode & 0o077 == 0
        # Handed to git in its environment for each command, never written down.
        assert "t0ken-VALUE" not in config and "bot:" not in config
        assert not any(
            b"t0ken-VALUE" in path.read_bytes()
            for path in good.directory.rglob("*")
            if path.is_file()
        )
        bad = repository(server, tmp_path / "bad", credentials="bot:WRONG-secret@")
        with pytest.raises(SourceError) as refused:
            await scan(bad)
        # The reason is what /healthz shows (beside the source's redacted name): a public
        # word; git's own text is the detail the log shows, without the credentials.
        assert refused.value.reason == "git fetch: authentication failed"
        assert refused.value.detail is not None
        assert "WRONG-secret" not in refused.value.detail
        assert "Authentication failed" in refused.value.detail


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "reason", "detail"),
    [
        (
            "git+http://127.0.0.1:9/wiki.git@main",
            "git fetch: unreachable",
            "unable to access 'http://127.0.0.1:9/wiki.git/': Failed to connect to 127.0.0.1 "
            "port 9",
        ),
        (
            "git+ssh://git@127.0.0.1:9/org/wiki.git@main",
            "git fetch: unreachable",
            "ssh: connect to host 127.0.0.1 port 9: Connection refused",
        ),
        (
            "git+file:///nonexistent/wiki.git@main",
            "git fetch: repository not found",
            "'/nonexistent/wiki.git' does not appear to be a git repository",
        ),
    ],
)
async def test_a_failed_fetch_says_why_in_one_public_word_and_one_line(
    source: str, reason: str, detail: str, tmp_path: Path
) -> None:
    repo = GitRepository(source, directory=clone_directory(tmp_path, source))
    with pytest.raises(SourceError) as failed:
        await scan(repo)
    assert failed.value.reason == reason
    assert failed.value.detail is not None
    assert failed.value.detail.startswith(detail)
    assert "\n" not in failed.value.detail
    assert "and the repository exists" not in failed.value.detail  # git's advice, not why


@pytest.mark.slow
async def test_a_branch_with_a_slash_is_fetched(
    served: tuple[GitServer, Wiki], tmp_path: Path
) -> None:
    server, wiki = served
    from tests.fakes.git_server import git

    git("-C", str(wiki.work), "push", "--quiet", "origin", "HEAD:refs/heads/feature/x")
    source = f"git+{server.base_url}/wiki.git@feature/x#subdirectory=wiki/papers"
    repo = GitRepository(source, directory=clone_directory(tmp_path, source))
    found = await scan(repo)
    assert {p.key for p in found.pages} == {"2026/2608.1-a", "2026/2608.2-b"}


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.usefixtures("umask_022")
async def test_trendbot_poll_on_a_repository(
    served: tuple[GitServer, Wiki], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    from tests.cli import run_cli_async

    server, wiki = served
    token_url = server.base_url.replace("://", "://reader:s3cr3t-token@")
    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/data/db.sqlite",
        WIKI_SOURCES=f"git+{token_url}/wiki.git@main#subdirectory=wiki",
        LOG_LEVEL="DEBUG",
    )

    async def poll() -> str:
        done = await run_cli_async("poll", env=env, cwd=tmp_path, seconds=60)
        assert done.returncode == 0, done.stderr
        assert "s3cr3t-token" not in done.stdout + done.stderr
        return done.stdout.strip().splitlines()[-1]

    assert await poll() == "2 new, 0 updated, 0 skipped (baseline: nothing queued)"
    assert (tmp_path / "data" / "git").is_dir()  # the clone, beside the database
    # The owner's alone under the usual umask, as the database: the clone holds its origin.
    (clone,) = (tmp_path / "data" / "git").iterdir()
    for directory in (tmp_path / "data", tmp_path / "data" / "git", clone):
        assert mode(directory) == 0o700, directory
    assert await poll() == "0 new, 0 updated, 0 skipped"
    wiki.write("wiki/papers/2026/2608.5-e.md", page("E"))
    wiki.write("wiki/papers/2026/2608.2-b.md", page("B", tags="reasoning", tldr="New TL;DR."))
    wiki.commit("add e, change b")
    assert await poll() == "1 new, 1 updated, 0 skipped"
    wiki.move("wiki/papers/2026/2608.5-e.md", "wiki/papers/2026/2608.5-e-renamed.md")
    wiki.commit("rename e")
    assert await poll() == "0 new, 0 updated, 0 skipped"  # a rename is not a new page
    wiki.write("wiki/broken.md", "---\ntitle: [unclosed\n---\n")
    wiki.commit("a broken page")
    assert await poll() == "0 new, 0 updated, 1 skipped"


@pytest.mark.slow
@pytest.mark.timeout(60)
async def test_a_failing_fetch_fails_the_source_not_the_poll(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    from tests.cli import run_cli_async

    env = dict(
        clean_env,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/db.sqlite",
        WIKI_SOURCES="git+http://user:pa55word@127.0.0.1:9/wiki.git@main",
    )
    done = await run_cli_async("poll", env=env, cwd=tmp_path, seconds=60)
    assert done.returncode == 1  # every source failed
    assert "pa55word" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "git fetch" in done.stdout + done.stderr


@pytest.mark.slow
async def test_many_polls_in_a_row_keep_fetching(
    served: tuple[GitServer, Wiki], tmp_path: Path
) -> None:
    """Each poll's negotiation grows with the commits the clone has; past a size git
    compresses its request, which the server must take as git does."""
    server, wiki = served
    repo = repository(server, tmp_path)
    repo.mark_scanned((await scan(repo)).commit)
    for n in range(25):
        wiki.write(f"wiki/papers/2026/2609.{n}-x.md", page(f"X{n}"))
        wiki.commit(f"page {n}")
        found = await scan(repo)
        assert {p.key for p in found.pages} == {f"papers/2026/2609.{n}-x"}, n
        repo.mark_scanned(found.commit)
