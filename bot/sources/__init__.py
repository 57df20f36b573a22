"""The configured sources, each with one identity that every output goes through.

A source is configured (``WIKI_SOURCES``) as a directory or a URL, and a URL may carry
credentials: ``https://user:pass@host/feed``, ``?api_key=…``, ``https://TOKEN@host/…``. The
configured string is only ever handed to the fetch. Everywhere else a source is named by
its :class:`Source`:

- ``id``: stable and free of credentials; the key of its poll streak and of its alert
  (``source:ID``), shown beside the name in ``/healthz``. It is derived from the URL without
  its credentials, so rotating a feed's token keeps the id and the health it keys.
- ``name``: the redacted form of :func:`bot.sources.urls.redact_url`, shown in chat replies,
  the CLI, ``/healthz``, metric labels, logs and alerts. Two sources that redact alike
  (the same feed with two tokens, or two queries) have their id appended, so no two
  configured sources are shown with one name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit

from bot.sources.urls import is_secret_param, redact_url

__all__ = ["Source", "SourceSet", "identify", "source_id"]

ID_PREFIX = "src-"
ID_HEX_CHARS = 12  # 48 bits: no two sources of one deployment collide in practice


@dataclass(frozen=True, slots=True)
class Source:
    """One configured source. ``configured`` (the URL with its credentials) is left out of
    ``repr`` so that a source in a log line or a traceback shows only its id and name."""

    configured: str = field(repr=False)
    id: str
    name: str


def _without_credentials(configured: str) -> str:
    """The configured URL with its user info and secret query parameters removed, its
    scheme and host folded to lower case; a directory as configured."""
    if "://" not in configured:
        return configured
    try:
        parts = urlsplit(configured)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return redact_url(configured)
    query_pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(name, value) for name, value in query_pairs if not is_secret_param(name)]
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    query = f"?{urlencode(kept)}" if kept else ""
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    return f"{parts.scheme.lower()}://{netloc}{parts.path}{query}{fragment}"


def source_id(configured: str) -> str:
    """The stable id of a configured source: a digest of it without its credentials."""
    digest = hashlib.sha256(_without_credentials(configured).encode("utf-8", "replace"))
    return ID_PREFIX + digest.hexdigest()[:ID_HEX_CHARS]


def identify(configured: Sequence[str]) -> tuple[Source, ...]:
    """The identities of the sources configured, in their order.

    Two sources that differ only in their credentials get ``-2``, ``-3``... after the id of
    the first (in configured order); two whose redacted names are equal are shown with
    their id appended.
    """
    ids: list[str] = []
    seen: dict[str, int] = {}
    for url in configured:
        base = source_id(url)
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    shown = [_shown(url) for url in configured]
    counts: dict[str, int] = {}
    for name in shown:
        counts[name] = counts.get(name, 0) + 1
    return tuple(
        Source(configured=url, id=sid, name=name if counts[name] == 1 else f"{name} ({sid})")
        for url, sid, name in zip(configured, ids, shown, strict=True)
    )


def _shown(configured: str) -> str:
    if "://" in configured and not configured.startswith(("http://", "https://")):
        # Any other URL (a later git+https source): shown as a feed URL is, credentials out.
        scheme, _, rest = configured.partition("://")
        return scheme + redact_url("https://" + rest).removeprefix("https")
    return redact_url(configured)


class SourceSet:
    """The configured sources, looked up by what the store holds (their configured form)."""

    __slots__ = ("_all", "_by_configured")

    def __init__(self, configured: Iterable[str]) -> None:
        self._all = identify(tuple(configured))
        self._by_configured = {source.configured: source for source in self._all}

    def __iter__(self) -> Iterator[Source]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def __contains__(self, configured: object) -> bool:
        return configured in self._by_configured

    def of(self, configured: str) -> Source:
        """The identity of ``configured``; a source no longer configured (a row the store
        still holds) gets one of its own, named as it would be alone."""
        found = self._by_configured.get(configured)
        if found is not None:
            return found
        return Source(configured=configured, id=source_id(configured), name=_shown(configured))
