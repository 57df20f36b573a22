"""A wiki kept in a git repository as a source: fetch, diff, read what changed.

``WIKI_SOURCES`` names such a repository in pip's URL form::

    git+https://host/org/wiki.git@main#subdirectory=wiki
    git+ssh://git@host/org/wiki.git@main
    git+file:///srv/wiki.git

The bot keeps a bare clone of its own under its data directory and, on each poll, fetches
the branch's tip shallowly (``--depth=1``). An unchanged tip costs that one fetch. A new
tip is compared with the commit the last scan recorded (a ref of the clone), tree against
tree with git's rename detection (``git diff-tree -M``): only the pages with an added,
changed, renamed or deleted file are read, a rename keeps its page (the store renames it),
and a deletion is noticed. Comparing trees, not history, keeps a force-push or a history
rewritten under the bot an ordinary change.

The git command does the work (not a library such as dulwich): it is the reference for
every transport the URL form allows (smart HTTP, SSH, local), for shallow fetches and for
rename detection, and operators already know how to give it credentials. Credentials in
the URL (``https://token@host/…``) are held apart (:mod:`bot.rules.sources`): git is handed
them as an ``Authorization`` header for the repository's host in its environment
(``GIT_CONFIG_*``), never on a command line that ``ps`` shows nor in the clone's config,
whose ``origin`` is the public URL; every error is scrubbed of them.

A hostile repository costs no more than a wiki: the tree is listed with each blob's size
(``ls-tree -l``), so a file over the page cap is skipped by its size and never read; the
listing stops at :data:`MAX_GIT_PAGE_FILES` page files (a tree bomb), and the source goes on
from that commit; a blob shared by many paths is read once. Each git command runs in a
process group of its own, ended whole on its deadline or when the poll stops waiting
(bot/sources/gitrun.py). Redirects follow the feeds' policy (:meth:`GitRepository.fetch`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from bot.errors import ParseError, SourceError
from bot.models import Page, Skipped
from bot.rules.giturl import parse_git_url
from bot.rules.sources import SourceSpec, parse_source
from bot.rules.urls import redact_url
from bot.sources.bounds import MAX_PATH_CHARS, bound_page, too_many_tags
from bot.sources.feed import (
    MAX_REDIRECTS,
    REDIRECT_STATUSES,
    SourceAuth,
    make_feed_client,
    redirect_target,
)
from bot.sources.gitrun import GitRunner, auth_environment, redirected
from bot.sources.pages import (
    MAX_PAGE_BYTES,
    PageFile,
    merge_translations,
    parse_page_file,
    split_path,
)
from bot.store import files

__all__ = [
    "GitRepository",
    "GitScan",
    "clone_directory",
]

log = logging.getLogger("bot.sources")

PAGE_SUFFIX = ".md"
SCANNED_REF = "refs/trendbot/scanned"
FETCHED_REF = "refs/trendbot/fetched"
REGULAR_FILE_MODES = ("100644", "100755")  # not symlinks (120000) nor submodules (160000)
BLOB_BATCH = 500  # blobs read by one `git cat-file --batch`
BATCH_BYTES = 8 * 1024 * 1024  # and at most this many bytes of them: what is held at once
# A wiki of 20,000 page files scans in 5 s (docs/benchmarks.md); a tree of more is no wiki
# a chat can follow (a few hundred bytes of shared subtrees make 400,000 paths): the first
# page files by path are kept, with one log line, and the source goes on from that commit.
MAX_GIT_PAGE_FILES = 25_000
MAX_TREE_ENTRIES = 8 * MAX_GIT_PAGE_FILES  # files of any kind listed before the listing stops
PROBE_SECONDS = 20.0  # learning where a redirect leads, every hop included
INFO_REFS = "/info/refs?service=git-upload-pack"  # what git asks first (gitprotocol-http(5))


@dataclass(frozen=True, slots=True)
class TreeFile:
    """A page file of the tree: its blob and the blob's size (known before it is read)."""

    blob: str
    size: int


@dataclass(frozen=True, slots=True)
class GitScan:
    """The outcome of one poll of a repository.

    Attributes:
        commit: The tip scanned (record it with :meth:`GitRepository.mark_scanned` once
            the pages are stored).
        commit_time: When that commit was made (its committer date, UTC).
        unchanged: The tip is the one scanned last time: nothing else is set.
        pages: The pages with an added, changed or renamed file, each complete.
        present_keys: The key of every page file in the tree now.
        renames: ``(old key, new key)`` of pages whose files all moved.
        skipped: Files that could not be read or parsed.
    """

    commit: str
    commit_time: dt.datetime
    unchanged: bool = False
    pages: tuple[Page, ...] = ()
    present_keys: frozenset[str] = frozenset()
    renames: tuple[tuple[str, str], ...] = ()
    skipped: tuple[Skipped, ...] = ()


class GitRepository:
    """The bot's own bare clone of one source repository, under ``directory``.

    Args:
        source: The source as configured (its credentials are held apart, for git alone).
        directory: Where the clone is kept (see :func:`clone_directory`).
        stop: Set by a caller that no longer waits (its poll timed out or was cancelled,
            the service is stopping): the git command running is ended with its helpers
            and the scan stops at the next file.
        allow_cross_host: A redirect to another host is followed
            (``FEED_ALLOW_CROSS_HOST_REDIRECTS``); see :meth:`fetch`.
    """

    def __init__(
        self,
        source: SourceSpec | str,
        *,
        directory: Path,
        stop: threading.Event | None = None,
        allow_cross_host: bool = False,
    ) -> None:
        spec = source if isinstance(source, SourceSpec) else parse_source(source)
        self.source = spec.public
        self.url = parse_git_url(spec.public)
        self.shown = redact_url(spec.public)  # how logs, replies and errors name it
        self.directory = directory
        self.allow_cross_host = allow_cross_host
        self._credentials = spec.credentials
        self._runner = GitRunner(
            spec.public,
            directory=directory,
            stop=stop,
            credentials=spec.credentials,
            env=auth_environment(self.url.remote, spec.credentials),
        )

    # ------------------------------------------------------------------ git itself

    def _git(self, *args: str, stdin: bytes | None = None) -> bytes:
        return self._runner.run(*args, stdin=stdin)

    def _check_stop(self) -> None:
        if self._runner.stop.is_set():
            log.info("%s: scan stopped: its poll was cancelled or ran out of time", self.shown)
            raise SourceError(self.source, "stopped")

    def _ensure_clone(self) -> None:
        """A bare repository whose ``origin`` is the source's public URL (an older clone's
        URL with a token in it is replaced), its config readable by the bot alone."""
        if not (self.directory / "HEAD").exists():
            files.private_dirs(self.directory)
            self._git("init", "--quiet", "--bare")
        self._write_origin(self.url.remote)

    def _write_origin(self, remote: str) -> None:
        """``origin`` fetches from ``remote``, written in the clone's config, readable by
        the bot alone (the URL may carry a token)."""
        config = self.directory / "config"
        lines = config.read_text(encoding="utf-8").splitlines()
        kept: list[str] = []
        skipping = False
        for line in lines:
            if line.strip().startswith("["):
                skipping = line.strip() == '[remote "origin"]'
            if not skipping:
                kept.append(line)
        quoted = remote.replace("\\", "\\\\").replace('"', '\\"')
        kept += ['[remote "origin"]', f'\turl = "{quoted}"']
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write("\n".join(kept) + "\n")
        os.chmod(config, 0o600)

    def _rev(self, ref: str) -> str | None:
        try:
            return (
                self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
            )
        except SourceError:
            self._check_stop()
            return None

    # ------------------------------------------------------------------ a poll

    def fetch(self) -> tuple[str, dt.datetime]:
        """Fetch the branch's tip shallowly; returns it and its commit time.

        git never follows a redirect itself. When the server answers one, where it leads
        is learnt hop by hop under the feeds' policy (:func:`bot.sources.feed.redirect_target`:
        the same host, or another only with ``allow_cross_host``, never from a public host
        to an internal address), and the fetch is made once more from there.
        """
        self._ensure_clone()
        try:
            self._fetch()
        except SourceError as exc:
            http = self.url.remote.lower().startswith(("http://", "https://"))
            if not (http and exc.detail and redirected(exc.detail)):
                raise
            self._write_origin(self._follow_redirects())
            self._fetch()  # from where the redirects led; one more redirect is refused
        commit = self._rev(FETCHED_REF)
        if commit is None:  # pragma: no cover - a successful fetch writes the ref
            raise SourceError(self.source, "git fetch: no commit fetched")
        seconds = int(self._git("show", "-s", "--format=%ct", commit).decode().strip() or 0)
        return commit, dt.datetime.fromtimestamp(seconds, dt.UTC)

    def _fetch(self) -> None:
        wanted = self.url.ref or "HEAD"
        self._git(
            "fetch",
            "--quiet",
            "--depth=1",
            "--no-tags",
            "--force",
            "origin",
            f"+{wanted}:{FETCHED_REF}",
        )

    def _follow_redirects(self) -> str:
        """The repository's URL where the redirects lead, each hop allowed by the policy."""

        async def stoppable() -> str:
            task = asyncio.ensure_future(self._probe())
            while not task.done():
                if self._runner.stop.is_set():
                    task.cancel()
                await asyncio.wait({task}, timeout=0.05)
            return task.result()

        try:
            return asyncio.run(stoppable())
        except asyncio.CancelledError:
            raise SourceError(self.source, "stopped") from None
        except (TimeoutError, httpx.HTTPError) as exc:
            detail = f"following a redirect: {type(exc).__name__}"
            raise SourceError(self.source, "git fetch: unreachable", detail=detail) from None

    async def _probe(self) -> str:
        remote = self.url.remote.rstrip("/")
        origin = httpx.URL(remote)
        target = httpx.URL(remote + INFO_REFS)
        # The credentials as git sends them: to the repository's own host alone.
        auth = SourceAuth(self._credentials, host=origin.host, secure=origin.scheme == "https")
        async with asyncio.timeout(PROBE_SECONDS), make_feed_client() as client:
            for _hop in range(MAX_REDIRECTS + 1):
                base = target
                request = client.build_request("GET", target)
                response = await client.send(request, stream=True, auth=auth)
                await response.aclose()
                if response.status_code not in REDIRECT_STATUSES:
                    if not str(target).endswith(INFO_REFS):  # git's own condition (http.c)
                        raise self._refused("redirect to a URL that is no git repository's")
                    return str(target).removesuffix(INFO_REFS)
                try:
                    target = await redirect_target(
                        remote,
                        origin=origin,
                        base=base,
                        response=response,
                        allow_cross_host=self.allow_cross_host,
                    )
                except SourceError as exc:
                    raise self._refused(exc.reason) from None
        raise self._refused(f"more than {MAX_REDIRECTS} redirects")

    def _refused(self, why: str) -> SourceError:
        return SourceError(
            self.source, "git fetch: redirect refused", detail=self._credentials.scrub(why)
        )

    def mark_scanned(self, commit: str) -> None:
        """Remember ``commit`` as scanned: the next poll diffs against it (and keeps its
        tree, which the shallow fetches would otherwise let go)."""
        self._git("update-ref", SCANNED_REF, commit)

    def scan(self, *, base_url: str | None, default_lang: str) -> GitScan:
        """Fetch, then the pages that changed since the last scan (every page the first
        time, or when the last scanned commit is gone)."""
        commit, commit_time = self.fetch()
        scanned = self._rev(SCANNED_REF)
        if scanned == commit:
            return GitScan(commit=commit, commit_time=commit_time, unchanged=True)
        tree = self._tree(commit)
        files_by_key: dict[str, list[str]] = {}
        skipped: list[Skipped] = []
        for rel, file in tree.items():
            if len(rel) > MAX_PATH_CHARS:
                reason = f"path longer than {MAX_PATH_CHARS} characters"
                log.warning("%s: skipped %s…: %s", self.shown, rel[:80], reason)
                skipped.append(Skipped(source=self.shown, path=rel[:MAX_PATH_CHARS], reason=reason))
                continue
            if file.size > MAX_PAGE_BYTES:  # never read: its size is all that is learnt
                reason = f"file larger than {MAX_PAGE_BYTES // 1_000_000} MB ({file.size} bytes)"
                log.warning("%s: skipped %s: %s, not read", self.shown, rel, reason)
                skipped.append(Skipped(source=self.shown, path=rel, reason=reason))
                continue
            files_by_key.setdefault(split_path(rel)[0], []).append(rel)
        renames: list[tuple[str, str]] = []
        if scanned is None:
            changed_keys = set(files_by_key)
        else:
            changed_keys, renames = self._changes(scanned, commit, files_by_key)
        parsed: list[PageFile] = []
        wanted = [rel for key in sorted(changed_keys) for rel in files_by_key.get(key, [])]
        for rel, data in self._files(wanted, tree):
            self._check_stop()
            try:
                parsed.append(parse_page_file(data, path=rel, default_lang=default_lang))
            except ParseError as exc:
                log.warning("%s: skipped %s: %s", self.shown, rel, exc.reason)
                skipped.append(Skipped(source=self.shown, path=rel, reason=exc.reason))
            except Exception as exc:  # a parser bug costs one file, never the source
                reason = f"unexpected error: {type(exc).__name__}"
                log.error("%s: skipped %s: %s", self.shown, rel, reason, exc_info=True)
                skipped.append(Skipped(source=self.shown, path=rel, reason=reason))
        pages: list[Page] = []
        over: list[tuple[str, int]] = []
        for page in merge_translations(parsed, source=self.source, base_url=base_url):
            bounded, dropped = bound_page(page)
            if dropped:
                over.append((page.key, dropped))
            pages.append(bounded)
        if (line := too_many_tags(over)) is not None:
            log.warning("%s: %s", self.shown, line)
        return GitScan(
            commit=commit,
            commit_time=commit_time,
            pages=tuple(pages),
            present_keys=frozenset(files_by_key),
            renames=tuple(renames),
            skipped=tuple(skipped),
        )

    def _tree(self, commit: str) -> dict[str, TreeFile]:
        """Every page file under the subdirectory, with its blob's size, in path order: at
        most :data:`MAX_GIT_PAGE_FILES` of them (the listing stops there)."""
        prefix = f"{self.url.subdirectory}/" if self.url.subdirectory else ""
        args = ["ls-tree", "-r", "-l", "-z", "--full-tree", commit]
        if prefix:
            args += ["--", prefix]
        out: dict[str, TreeFile] = {}
        entries = 0
        with self._runner.open(*args) as listing:
            for entry in listing.records():
                entries += 1
                meta, _, raw_path = entry.partition(b"\t")
                mode, kind, blob, size = meta.decode().split()
                path = raw_path.decode("utf-8", "surrogateescape")
                if kind != "blob" or mode not in REGULAR_FILE_MODES:
                    continue
                rel = path[len(prefix) :]
                if not rel.endswith(PAGE_SUFFIX) or any(p.startswith(".") for p in rel.split("/")):
                    if entries <= MAX_TREE_ENTRIES:
                        continue
                elif len(out) < MAX_GIT_PAGE_FILES and entries <= MAX_TREE_ENTRIES:
                    try:
                        rel.encode("utf-8")
                    except UnicodeEncodeError:
                        log.warning("%s: skipped a file whose name is not UTF-8", self.shown)
                        continue
                    out[rel] = TreeFile(blob=blob, size=int(size))
                    continue
                listing.close_early()
                log.warning(
                    "%s: more than %d page files (or %d files) in the tree: the first %d by "
                    "path are kept, the rest left out",
                    self.shown,
                    MAX_GIT_PAGE_FILES,
                    MAX_TREE_ENTRIES,
                    len(out),
                )
                break
        return out

    def _changes(
        self, old: str, new: str, files_by_key: dict[str, list[str]]
    ) -> tuple[set[str], list[tuple[str, str]]]:
        """The keys whose files changed between two commits, and the pages renamed (every
        key, no rename, when more files changed than a tree may hold)."""
        prefix = f"{self.url.subdirectory}/" if self.url.subdirectory else ""
        args = ["diff-tree", "-r", "-z", "-M", "--name-status", "--no-commit-id", old, new]
        if prefix:
            args += ["--", prefix]
        changed: set[str] = set()
        moved: dict[str, set[str]] = {}  # old key -> the new keys its files went to
        stayed: set[str] = set()  # old keys some file of which did not move away
        with self._runner.open(*args) as diff:
            fields = diff.records()
            for count, raw in enumerate(fields):
                if count > MAX_TREE_ENTRIES:
                    diff.close_early()
                    return set(files_by_key), []
                status = raw.decode()
                if not status:
                    break
                if status.startswith(("R", "C")):
                    old_path = next(fields).decode("utf-8", "surrogateescape")
                    new_path = next(fields).decode("utf-8", "surrogateescape")
                else:
                    old_path = new_path = next(fields).decode("utf-8", "surrogateescape")
                old_rel, new_rel = old_path[len(prefix) :], new_path[len(prefix) :]
                if status.startswith("R") and old_rel.endswith(PAGE_SUFFIX):
                    old_key, new_key = split_path(old_rel)[0], split_path(new_rel)[0]
                    if old_key != new_key:
                        moved.setdefault(old_key, set()).add(new_key)
                    if status != "R100" or old_key != new_key:
                        changed.add(new_key)
                    continue
                if new_rel.endswith(PAGE_SUFFIX):
                    key = split_path(new_rel)[0]
                    changed.add(key)
                    if status.startswith("D"):
                        stayed.add(key)
        renames = []
        for old_key, new_keys in moved.items():
            # A page moved when all of its files went to one new key and none is left.
            if len(new_keys) == 1 and old_key not in files_by_key and old_key not in stayed:
                renames.append((old_key, next(iter(new_keys))))
        return {key for key in changed if key in files_by_key}, renames

    def _files(self, rels: list[str], tree: dict[str, TreeFile]) -> Iterator[tuple[str, bytes]]:
        """``(path, bytes)`` of each file (none over the page cap: the tree gave the sizes),
        each blob read once however many paths share it, a batch at a time so that at most
        :data:`BATCH_BYTES` are held at once."""
        by_blob: dict[str, list[str]] = {}
        for rel in rels:
            by_blob.setdefault(tree[rel].blob, []).append(rel)
        batch: list[str] = []
        held = 0
        for blob in [*by_blob, None]:
            size = tree[by_blob[blob][0]].size if blob is not None else 0
            if batch and (blob is None or len(batch) >= BLOB_BATCH or held + size > BATCH_BYTES):
                for done, data in zip(batch, self._blob_batch(batch), strict=True):
                    for rel in by_blob[done]:
                        yield rel, data
                batch, held = [], 0
            if blob is not None:
                batch.append(blob)
                held += size

    def _blob_batch(self, blobs: list[str]) -> list[bytes]:
        out = self._git("cat-file", "--batch", stdin=("\n".join(blobs) + "\n").encode())
        contents: list[bytes] = []
        position = 0
        for _ in blobs:
            end = out.index(b"\n", position)
            header = out[position:end].split()
            size = int(header[2]) if len(header) == 3 else 0
            start = end + 1
            contents.append(out[start : start + min(size, MAX_PAGE_BYTES + 1)])
            position = start + size + 1
        return contents


def clone_directory(data_dir: Path, source: str) -> Path:
    """Where the bot keeps its clone of ``source``: one folder per repository URL, named
    by a hash (the URL may carry credentials; the folder name must not)."""
    digest = hashlib.sha256(source.strip().encode()).hexdigest()[:16]
    return data_dir / "git" / digest
