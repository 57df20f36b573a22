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
the URL (``https://token@host/…``) are held apart (:mod:`bot.sources.spec`): git is handed
them as an ``Authorization`` header for the repository's host in its environment
(``GIT_CONFIG_*``), never on a command line that ``ps`` shows nor in the clone's config,
whose ``origin`` is the public URL; every error is scrubbed of them.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import logging
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from bot.errors import ParseError, SourceError
from bot.models import Page, Skipped
from bot.sources.bounds import MAX_PATH_CHARS, bound_page, too_many_tags
from bot.sources.pages import (
    MAX_PAGE_BYTES,
    PageFile,
    merge_translations,
    parse_page_file,
    split_path,
)
from bot.sources.spec import Credentials, SourceSpec, parse_source
from bot.sources.urls import redact_url

log = logging.getLogger("bot.sources")

SCHEMES = ("git+https", "git+http", "git+ssh", "git+file")
PAGE_SUFFIX = ".md"
GIT_TIMEOUT_SECONDS = 50.0  # below the poller's 60 s a source: a hung fetch fails alone
SCANNED_REF = "refs/trendbot/scanned"
FETCHED_REF = "refs/trendbot/fetched"
REGULAR_FILE_MODES = ("100644", "100755")  # not symlinks (120000) nor submodules (160000)
BLOB_BATCH = 500  # blobs read by one `git cat-file --batch`: bounds the bytes held at once


def is_git(source: str) -> bool:
    """Whether a ``WIKI_SOURCES`` entry names a git repository (``git+…://``)."""
    return source.strip().lower().startswith(tuple(f"{scheme}://" for scheme in SCHEMES))


@dataclass(frozen=True, slots=True)
class GitUrl:
    """A repository in pip's form, taken apart."""

    remote: str  # what git fetches from: the URL without ``git+``, ``@REF`` and fragment
    ref: str | None  # a branch or tag; None for the remote's default branch
    subdirectory: str  # the wiki's folder inside the repository, "" for its root

    @property
    def shown(self) -> str:
        """The repository without its credentials, for logs, replies and errors."""
        return redact_url(self.remote)


def parse_git_url(source: str) -> GitUrl:
    """``git+https://host/org/wiki.git@main#subdirectory=wiki`` -> its parts.

    Raises:
        ValueError: not a git URL of an accepted scheme, an empty path, or a
            subdirectory that climbs out of the repository.
    """
    text = source.strip()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise ValueError("must be git+https://, git+ssh:// or git+file:// (pip's form)")
    parts = urlsplit(f"{scheme[4:].lower()}://{rest}")
    path, ref = parts.path, None
    at = path.rfind("@")
    if at > path.rfind("/") or (at >= 0 and "/" not in path[at:]):
        path, ref = path[:at], unquote(path[at + 1 :]) or None
    if not path.strip("/") and parts.scheme != "file":
        raise ValueError("names no repository path")
    subdirectory = ""
    for field in parts.fragment.split("&"):
        name, _, value = field.partition("=")
        if name == "subdirectory":
            subdirectory = unquote(value).strip("/")
    if subdirectory and any(part in ("", ".", "..") for part in subdirectory.split("/")):
        raise ValueError("#subdirectory= must be a folder inside the repository")
    if ref is not None and (ref.startswith("-") or ".." in ref or any(c.isspace() for c in ref)):
        raise ValueError("@REF must be a branch or tag name")
    remote = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    return GitUrl(remote=remote, ref=ref, subdirectory=subdirectory)


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
    """The bot's own bare clone of one source repository, under ``directory``."""

    def __init__(self, source: SourceSpec | str, *, directory: Path) -> None:
        spec = source if isinstance(source, SourceSpec) else parse_source(source)
        self.source = spec.public
        self.url = parse_git_url(spec.public)
        self.shown = redact_url(spec.public)  # how logs, replies and errors name it
        self.directory = directory
        self._credentials = spec.credentials

    # ------------------------------------------------------------------ git itself

    def _git(self, *args: str, stdin: bytes | None = None) -> bytes:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.directory),  # no user's config or credentials leak in
            "GIT_TERMINAL_PROMPT": "0",  # a missing credential fails, never waits
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
            "LC_ALL": "C",
            **_auth_environment(self.url.remote, self._credentials),
        }
        try:
            # The arguments are this module's own and the repository's ids: no shell, and the
            # source URL is never among them (it is in the clone's config).
            done = subprocess.run(  # noqa: S603
                ["git", "--git-dir", str(self.directory), *args],  # noqa: S607 - git on PATH
                input=stdin,
                capture_output=True,
                env=env,
                timeout=GIT_TIMEOUT_SECONDS,
                check=False,
            )
        except FileNotFoundError:
            raise SourceError(self.source, "the git command is not installed") from None
        except subprocess.TimeoutExpired:
            raise SourceError(
                self.source, f"git {args[0]} took longer than {GIT_TIMEOUT_SECONDS:g} s"
            ) from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            reason = next((line for line in reversed(message) if line.strip()), "failed")
            reason = self._credentials.scrub(reason.removeprefix("fatal: ").removeprefix("error: "))
            if "could not read Username" in reason or "could not read Password" in reason:
                # git asks for credentials when the server refused the ones in the header.
                reason = "Authentication failed" + (
                    ": the server refused the credentials" if self._credentials else ""
                )
            raise SourceError(self.source, f"git {args[0]}: {reason}")
        return done.stdout

    def _ensure_clone(self) -> None:
        """A bare repository whose ``origin`` is the source's public URL (an older clone's
        URL with a token in it is replaced), its config readable by the bot alone."""
        if not (self.directory / "HEAD").exists():
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._git("init", "--quiet", "--bare")
        config = self.directory / "config"
        lines = config.read_text(encoding="utf-8").splitlines()
        kept: list[str] = []
        skipping = False
        for line in lines:
            if line.strip().startswith("["):
                skipping = line.strip() == '[remote "origin"]'
            if not skipping:
                kept.append(line)
        remote = self.url.remote.replace("\\", "\\\\").replace('"', '\\"')
        kept += ['[remote "origin"]', f'\turl = "{remote}"']
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
            return None

    # ------------------------------------------------------------------ a poll

    def fetch(self) -> tuple[str, dt.datetime]:
        """Fetch the branch's tip shallowly; returns it and its commit time."""
        self._ensure_clone()
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
        commit = self._rev(FETCHED_REF)
        if commit is None:  # pragma: no cover - a successful fetch writes the ref
            raise SourceError(self.source, "git fetch: no commit fetched")
        seconds = int(self._git("show", "-s", "--format=%ct", commit).decode().strip() or 0)
        return commit, dt.datetime.fromtimestamp(seconds, dt.UTC)

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
        too_long: list[Skipped] = []
        for rel in tree:
            if len(rel) > MAX_PATH_CHARS:
                reason = f"path longer than {MAX_PATH_CHARS} characters"
                log.warning("%s: skipped %s…: %s", self.shown, rel[:80], reason)
                too_long.append(
                    Skipped(source=self.shown, path=rel[:MAX_PATH_CHARS], reason=reason)
                )
                continue
            files_by_key.setdefault(split_path(rel)[0], []).append(rel)
        renames: list[tuple[str, str]] = []
        if scanned is None:
            changed_keys = set(files_by_key)
        else:
            changed_keys, renames = self._changes(scanned, commit, files_by_key)
        parsed: list[PageFile] = []
        skipped = list(too_long)
        wanted = [rel for key in sorted(changed_keys) for rel in files_by_key.get(key, [])]
        for rel, data in self._files(wanted, tree):
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

    def _tree(self, commit: str) -> dict[str, str]:
        """Every page file under the subdirectory: relative path -> blob id."""
        prefix = f"{self.url.subdirectory}/" if self.url.subdirectory else ""
        args = ["ls-tree", "-r", "-z", "--full-tree", commit]
        if prefix:
            args += ["--", prefix]
        out: dict[str, str] = {}
        for entry in self._git(*args).split(b"\0"):
            if not entry:
                continue
            meta, _, raw_path = entry.partition(b"\t")
            mode, kind, blob = meta.decode().split()
            path = raw_path.decode("utf-8", "surrogateescape")
            if kind != "blob" or mode not in REGULAR_FILE_MODES:
                continue
            rel = path[len(prefix) :]
            if not rel.endswith(PAGE_SUFFIX) or any(p.startswith(".") for p in rel.split("/")):
                continue
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                log.warning("%s: skipped a file whose name is not UTF-8", self.shown)
                continue
            out[rel] = blob
        return out

    def _changes(
        self, old: str, new: str, files_by_key: dict[str, list[str]]
    ) -> tuple[set[str], list[tuple[str, str]]]:
        """The keys whose files changed between two commits, and the pages renamed."""
        prefix = f"{self.url.subdirectory}/" if self.url.subdirectory else ""
        args = ["diff-tree", "-r", "-z", "-M", "--name-status", "--no-commit-id", old, new]
        if prefix:
            args += ["--", prefix]
        fields = self._git(*args).split(b"\0")
        changed: set[str] = set()
        moved: dict[str, set[str]] = {}  # old key -> the new keys its files went to
        stayed: set[str] = set()  # old keys some file of which did not move away
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i].decode()
            if status.startswith(("R", "C")):
                old_path, new_path = (
                    f.decode("utf-8", "surrogateescape") for f in fields[i + 1 : i + 3]
                )
                i += 3
            else:
                old_path = new_path = fields[i + 1].decode("utf-8", "surrogateescape")
                i += 2
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

    def _files(self, rels: list[str], tree: dict[str, str]) -> Iterator[tuple[str, bytes]]:
        """``(path, bytes)`` of each file, in order (at most one byte past the page cap
        each: the parser refuses a larger file), read a batch at a time so that only one
        batch's bytes are held at once."""
        for start in range(0, len(rels), BLOB_BATCH):
            batch = rels[start : start + BLOB_BATCH]
            yield from zip(batch, self._blob_batch([tree[rel] for rel in batch]), strict=True)

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


def _auth_environment(remote: str, credentials: Credentials) -> dict[str, str]:
    """git's environment for a repository's credentials: an ``Authorization: Basic``
    header sent to the repository's scheme, host and port alone (``http.<url>.extraHeader``
    through ``GIT_CONFIG_COUNT``, git 2.31)."""
    basic = credentials.basic()
    if basic is None or not remote.startswith(("https://", "http://")):
        return {}
    parts = urlsplit(remote)
    pair = base64.b64encode(":".join(basic).encode("utf-8")).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.{parts.scheme}://{parts.netloc}/.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {pair}",
    }


def clone_directory(data_dir: Path, source: str) -> Path:
    """Where the bot keeps its clone of ``source``: one folder per repository URL, named
    by a hash (the URL may carry credentials; the folder name must not)."""
    digest = hashlib.sha256(source.strip().encode()).hexdigest()[:16]
    return data_dir / "git" / digest
