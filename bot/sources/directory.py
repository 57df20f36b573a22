"""A directory of wiki pages as a source: walk it, re-read only what changed.

A scan stats every ``*.md`` file under the root and compares it with the stamps of the
previous scan (kept by the store): a file whose modification time and size are unchanged
is not read again, so a rescan of an unchanged wiki costs one ``stat`` per file. When any
file of a page is new or changed, every file of that page is parsed, so the page comes
back complete with all its translations.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path

from bot.errors import ParseError, SourceError
from bot.models import Page, Skipped
from bot.pages import (
    MAX_PAGE_BYTES,
    MAX_PATH_CHARS,
    PageFile,
    bound_page,
    merge_translations,
    parse_page_file,
    split_path,
    too_many_tags,
)

log = logging.getLogger("bot.sources")

PAGE_SUFFIX = ".md"
READ_THREADS = 4  # reads overlap parsing; more threads gain nothing on one disk
READ_AHEAD = 128  # files read ahead of the parser: bounds the bytes held in memory
READ_THREADS_FROM = 64  # fewer changed files than this are read in the calling thread


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What a scan remembers of one file, to know next time whether it changed.

    ``error`` is the reason the file was skipped, or None when it parsed.
    """

    mtime_ns: int
    size: int
    error: str | None = None

    def same_file(self, other: FileStamp) -> bool:
        """True when ``other`` has the same modification time and size."""
        return self.mtime_ns == other.mtime_ns and self.size == other.size


@dataclass(frozen=True, slots=True)
class DirectoryScan:
    """The outcome of one scan.

    Attributes:
        stamps: Every ``*.md`` file now present, by path relative to the root.
        pages: The pages with a new, changed or removed file, each complete.
        present_keys: The key of every page with a file now present, parsed or not;
            a known key missing from it was deleted.
        skipped: Every file that could not be read or parsed, including unchanged
            files that failed before.
    """

    stamps: dict[str, FileStamp]
    pages: list[Page]
    present_keys: frozenset[str]
    skipped: list[Skipped]


def scan_directory(
    root: Path,
    *,
    source: str,
    base_url: str | None,
    default_lang: str,
    known: Mapping[str, FileStamp],
    threads_from: int = READ_THREADS_FROM,
) -> DirectoryScan:
    """Scan a wiki directory, parsing only the pages whose files changed.

    Hidden files and directories (``.git``) are left out, symlinked directories are not
    followed, and a symlinked file is read only when it resolves inside the root.

    Args:
        root: The wiki's root directory.
        source: The source name recorded on pages and skipped files.
        base_url: The base of page links (see :func:`bot.pages.page_url`).
        default_lang: The language of a file that names none.
        known: The stamps of the previous scan, by relative path; empty on the first.
        threads_from: From this many changed files on, they are read by threads ahead of
            the parser; fewer are read in the calling thread.

    Returns:
        The scan's stamps, changed pages, present keys and skipped files.

    Raises:
        SourceError: ``root`` does not exist, is not a directory, or cannot be listed.
    """
    root_path = os.fspath(root)
    if not os.path.exists(root_path):
        raise SourceError(source, f"directory not found: {root_path}")
    if not os.path.isdir(root_path):
        raise SourceError(source, f"not a directory: {root_path}")

    stamps: dict[str, FileStamp] = {}
    files_by_key: dict[str, list[str]] = {}
    changed_keys: set[str] = set()
    too_long: list[Skipped] = []
    for rel, mtime_ns, size in sorted(_walk(root_path, source=source)):
        if len(rel) > MAX_PATH_CHARS:  # the store could not remember it; not a page
            reason = f"path longer than {MAX_PATH_CHARS} characters"
            log.warning("%s: skipped %s…: %s", source, rel[:80], reason)
            too_long.append(Skipped(source=source, path=rel[:MAX_PATH_CHARS], reason=reason))
            continue
        key = split_path(rel)[0]
        files_by_key.setdefault(key, []).append(rel)
        old = known.get(rel)
        if old is not None and old.mtime_ns == mtime_ns and old.size == size:
            stamps[rel] = old
        else:
            stamps[rel] = FileStamp(mtime_ns=mtime_ns, size=size)
            changed_keys.add(key)
    for rel in known.keys() - stamps.keys():
        key = split_path(rel)[0]
        if key in files_by_key:  # a translation was removed: the page changed
            changed_keys.add(key)

    parsed: list[PageFile] = []
    to_parse = [rel for key in sorted(changed_keys) for rel in files_by_key[key]]
    for rel, read in _readers(root_path, to_parse, threads_from=threads_from):
        stamp = stamps[rel]
        try:
            parsed.append(parse_page_file(read(), path=rel, default_lang=default_lang))
        except ParseError as exc:
            stamps[rel] = FileStamp(stamp.mtime_ns, stamp.size, exc.reason)
            old = known.get(rel)
            if old is None or not old.same_file(stamp) or old.error != exc.reason:
                log.warning("%s: skipped %s: %s", source, rel, exc.reason)
        except Exception as exc:  # a parser bug must cost one file, never the whole scan
            reason = f"unexpected error: {type(exc).__name__}"
            stamps[rel] = FileStamp(stamp.mtime_ns, stamp.size, reason)
            log.error("%s: skipped %s: %s", source, rel, reason, exc_info=True)
        else:
            if stamp.error is not None:
                stamps[rel] = FileStamp(stamp.mtime_ns, stamp.size)

    pages = []
    over: list[tuple[str, int]] = []
    for page in merge_translations(parsed, source=source, base_url=base_url):
        bounded, dropped = bound_page(page)
        if dropped:
            over.append((page.key, dropped))
        pages.append(bounded)
    if (line := too_many_tags(over)) is not None:
        log.warning("%s: %s", source, line)
    return DirectoryScan(
        stamps=stamps,
        pages=pages,
        present_keys=frozenset(files_by_key),
        skipped=too_long
        + [
            Skipped(source=source, path=rel, reason=stamp.error)
            for rel, stamp in stamps.items()
            if stamp.error is not None
        ],
    )


def _readers(
    root: str, rels: list[str], *, threads_from: int
) -> Iterator[tuple[str, Callable[[], bytes]]]:
    """``(rel, read)`` for each file, in order; ``read()`` gives its bytes or a ParseError.

    Many files are read by a few threads ahead of the parser (reading releases the GIL,
    so the disk works while the parser does), never more than :data:`READ_AHEAD` at once.
    """
    if len(rels) < threads_from:
        for rel in rels:
            yield rel, partial(_read, root, rel)
        return
    with ThreadPoolExecutor(READ_THREADS, thread_name_prefix="wiki-read") as pool:
        queue: deque[tuple[str, Future[bytes]]] = deque()
        upcoming = iter(rels)
        for rel in islice(upcoming, READ_AHEAD):
            queue.append((rel, pool.submit(_read, root, rel)))
        while queue:
            rel, future = queue.popleft()
            for following in islice(upcoming, 1):
                queue.append((following, pool.submit(_read, root, following)))
            yield rel, future.result


def _read(root: str, rel: str) -> bytes:
    try:
        with open(os.path.join(root, rel), "rb") as file:
            # One byte past the cap is enough for the parser to reject a file as too large.
            return file.read(MAX_PAGE_BYTES + 1)
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror or exc}") from None


def _walk(root: str, *, source: str) -> Iterator[tuple[str, int, int]]:
    """``(relative path, mtime_ns, size)`` of every page file under ``root``."""
    real_root = os.path.realpath(root)
    inside_prefix = real_root.rstrip(os.sep) + os.sep
    pending: list[tuple[str, str]] = [("", root)]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError as exc:
            if not prefix:
                raise SourceError(source, f"cannot list directory: {exc.strerror or exc}") from None
            log.warning("%s: cannot list %s: %s", source, prefix, exc.strerror or exc)
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((f"{prefix}{name}/", entry.path))
                    continue
                if not name.endswith(PAGE_SUFFIX) or not entry.is_file():
                    continue  # not a page, a symlinked directory, or a dangling link
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if not target.startswith(inside_prefix):
                        continue
                stat = entry.stat()
            except OSError:
                continue  # vanished or unreadable between listing and stat
            yield prefix + name, stat.st_mtime_ns, stat.st_size
