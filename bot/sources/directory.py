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
import stat
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from threading import Event

from bot.errors import ParseError, SourceError
from bot.models import FileStamp, Page, Skipped
from bot.sources.bounds import MAX_PATH_CHARS, bound_page, too_many_tags, unrecordable, valid_text
from bot.sources.pages import (
    MAX_PAGE_BYTES,
    PageFile,
    merge_translations,
    parse_page_file,
    split_path,
)

log = logging.getLogger("bot.sources")

PAGE_SUFFIX = ".md"
READ_THREADS = 4  # reads overlap parsing; more threads gain nothing on one disk
READ_AHEAD = 128  # files read ahead of the parser: bounds the bytes held in memory
READ_THREADS_FROM = 64  # fewer changed files than this are read in the calling thread
# Never blocks on a FIFO or a device swapped in after the walk; the read checks what it got.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

UNRECORDABLE = "page has text that cannot be recorded"
FileId = tuple[int, int]  # (st_dev, st_ino) of the file a walk checked


class ScanStopped(Exception):
    """The scan was asked to stop (its poll was cancelled or timed out) and did."""


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
    stop: Event | None = None,
) -> DirectoryScan:
    """Scan a wiki directory, parsing only the pages whose files changed.

    Hidden files and directories (``.git``) are left out, symlinked directories are not
    followed, and a symlinked file is read only when it resolves inside the root.

    Args:
        root: The wiki's root directory.
        source: The source name recorded on pages and skipped files.
        base_url: The base of page links (see :func:`bot.sources.pages.page_url`).
        default_lang: The language of a file that names none.
        known: The stamps of the previous scan, by relative path; empty on the first.
        threads_from: From this many changed files on, they are read by threads ahead of
            the parser; fewer are read in the calling thread.
        stop: Set by the caller that no longer waits for the scan (its poll was
            cancelled or ran out of time): the scan stops at the next file.

    Returns:
        The scan's stamps, changed pages, present keys and skipped files.

    Raises:
        SourceError: ``root`` does not exist, is not a directory, or cannot be listed.
        ScanStopped: ``stop`` was set.
    """
    try:
        return _scan(
            os.fspath(root),
            source=source,
            base_url=base_url,
            default_lang=default_lang,
            known=known,
            threads_from=threads_from,
            stop=stop,
        )
    except ScanStopped:
        log.info("%s: scan stopped: its poll was cancelled or ran out of time", source)
        raise


def _scan(
    root_path: str,
    *,
    source: str,
    base_url: str | None,
    default_lang: str,
    known: Mapping[str, FileStamp],
    threads_from: int,
    stop: Event | None,
) -> DirectoryScan:
    if not os.path.exists(root_path):
        raise SourceError(source, f"directory not found: {root_path}")
    if not os.path.isdir(root_path):
        raise SourceError(source, f"not a directory: {root_path}")

    stamps: dict[str, FileStamp] = {}
    files_by_key: dict[str, list[str]] = {}
    changed_keys: set[str] = set()
    checked: dict[str, FileId] = {}
    too_long: list[Skipped] = []
    for rel, mtime_ns, size, file_id in sorted(_walk(root_path, source=source, stop=stop)):
        if len(rel) > MAX_PATH_CHARS:  # the store could not remember it; not a page
            reason = f"path longer than {MAX_PATH_CHARS} characters"
            log.warning("%s: skipped %s…: %s", source, rel[:80], reason)
            too_long.append(Skipped(source=source, path=rel[:MAX_PATH_CHARS], reason=reason))
            continue
        if valid_text(rel) != rel:  # a name that is not UTF-8 (or holds NUL): no key
            shown, reason = valid_text(rel), "file name is not valid UTF-8"
            log.warning("%s: skipped %s: %s", source, shown, reason)
            too_long.append(Skipped(source=source, path=shown, reason=reason))
            continue
        checked[rel] = file_id
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
    to_parse = [(rel, checked[rel]) for key in sorted(changed_keys) for rel in files_by_key[key]]
    for rel, read in _readers(root_path, to_parse, threads_from=threads_from, stop=stop):
        stamp = stamps[rel]
        try:
            parsed.append(parse_page_file(read(), path=rel, default_lang=default_lang))
        except ParseError as exc:
            reason = valid_text(exc.reason)  # a parser's message may quote the file
            stamps[rel] = FileStamp(stamp.mtime_ns, stamp.size, reason)
            old = known.get(rel)
            if old is None or not old.same_file(stamp) or old.error != reason:
                log.warning("%s: skipped %s: %s", source, rel, reason)
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
        if unrecordable(page):  # never expected: every text passed valid_text
            for file in parsed:
                if file.key == page.key:
                    stamp = stamps[file.path]
                    stamps[file.path] = FileStamp(stamp.mtime_ns, stamp.size, UNRECORDABLE)
            log.warning("%s: skipped %s: %s", source, page.key, UNRECORDABLE)
            continue
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
    root: str, files: list[tuple[str, FileId]], *, threads_from: int, stop: Event | None
) -> Iterator[tuple[str, Callable[[], bytes]]]:
    """``(rel, read)`` for each file, in order; ``read()`` gives its bytes or a ParseError.

    Many files are read by a few threads ahead of the parser (reading releases the GIL,
    so the disk works while the parser does), never more than :data:`READ_AHEAD` at once.
    When the caller stops early (``stop`` set, or an error), reads not yet started are
    cancelled, so at most :data:`READ_THREADS` reads are still finishing.
    """
    if len(files) < threads_from:
        for rel, checked in files:
            _check_stop(stop)
            yield rel, partial(_read, root, rel, checked)
        return
    pool = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="wiki-read")
    try:
        queue: deque[tuple[str, Future[bytes]]] = deque()
        upcoming = iter(files)
        for rel, checked in islice(upcoming, READ_AHEAD):
            queue.append((rel, pool.submit(_read, root, rel, checked)))
        while queue:
            _check_stop(stop)
            rel, future = queue.popleft()
            for following, checked in islice(upcoming, 1):
                queue.append((following, pool.submit(_read, root, following, checked)))
            yield rel, future.result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _check_stop(stop: Event | None) -> None:
    if stop is not None and stop.is_set():
        raise ScanStopped


def _read(root: str, rel: str, checked: FileId) -> bytes:
    """The bytes of the file the walk checked, read through one descriptor.

    The path is opened once, without blocking (a FIFO or a device swapped in since the
    walk cannot hang the read), and the descriptor must be a regular file with the device
    and inode the walk checked: a file swapped for a symlink to somewhere else, or for
    anything else, between the walk and this read is skipped, never read.
    """
    try:
        fd = os.open(os.path.join(root, rel), _OPEN_FLAGS)
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror or exc}") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise ParseError("not a regular file")
        if (opened.st_dev, opened.st_ino) != checked:
            raise ParseError("file replaced while the wiki was scanned")
        os.set_blocking(fd, True)
        # One byte past the cap is enough for the parser to reject a file as too large.
        chunks: list[bytes] = []
        left = MAX_PAGE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _walk(root: str, *, source: str, stop: Event | None) -> Iterator[tuple[str, int, int, FileId]]:
    """``(relative path, mtime_ns, size, (device, inode))`` of every page file under ``root``.

    A plain file is checked with ``lstat``, so a symlink swapped in since the listing is
    not followed; a symlinked file counts only when its target resolves inside the root,
    and then the target's identity is what the read must find.
    """
    real_root = os.path.realpath(root)
    inside_prefix = real_root.rstrip(os.sep) + os.sep
    pending: list[tuple[str, str]] = [("", root)]
    while pending:
        _check_stop(stop)
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
                if not name.endswith(PAGE_SUFFIX):
                    continue
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if not target.startswith(inside_prefix):
                        continue
                    found = os.stat(target, follow_symlinks=False)
                else:
                    found = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # vanished or unreadable between listing and stat
            if not stat.S_ISREG(found.st_mode):
                continue  # a FIFO, a socket, a device, a symlinked directory
            yield prefix + name, found.st_mtime_ns, found.st_size, (found.st_dev, found.st_ino)
