"""The configured sources, each with one identity that every output goes through.

A source is configured (``WIKI_SOURCES``) as a directory or a URL, and a URL may carry
credentials: ``https://user:pass@host/feed``, ``?api_key=…``, ``https://TOKEN@host/…``. Each
entry is parsed once (:func:`bot.rules.sources.parse_source`) into its public identity and its
credentials, which only the fetchers unwrap. Everywhere else a source is named by its
:class:`Source`:

- ``key``: its public identity (the URL without user info and secret query values), the
  name the store keeps it under (``sources.name``) and the source of its pages.
- ``id``: a short digest of ``key``; the key of its poll streak and of its alert
  (``source:ID``), shown beside the name in ``/healthz``. Rotating a feed's token keeps it.
- ``name``: ``key`` shortened to scheme, host, port and path (a git source keeps
  ``@REF#subdirectory=``), shown in chat replies, the CLI, ``/healthz``, metric labels,
  logs and alerts. Two sources shown alike (one feed with two queries) have their id
  appended, so no two configured sources are shown with one name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from bot.rules.sources import SourceSpec, parse_sources, public_identity, source_kind
from bot.rules.urls import redact_url

__all__ = ["Source", "SourceSet", "identify", "source_id"]

ID_PREFIX = "src-"
ID_HEX_CHARS = 12  # 48 bits: no two sources of one deployment collide in practice


@dataclass(frozen=True, slots=True)
class Source:
    """One configured source: its spec (the credentials in it are redacted in ``repr``),
    its id and the name it is shown by."""

    spec: SourceSpec
    id: str
    name: str

    @property
    def key(self) -> str:
        """The public identity: what the store and every page of the source hold."""
        return self.spec.public


def source_id(configured: str) -> str:
    """The stable id of a source (configured, or its public identity): a digest of its
    public identity, so credentials never reach it and rotating them keeps it."""
    digest = hashlib.sha256(public_identity(configured).encode("utf-8", "replace"))
    return ID_PREFIX + digest.hexdigest()[:ID_HEX_CHARS]


def identify(configured: Sequence[str]) -> tuple[Source, ...]:
    """The identities of the sources configured, in their order.

    Raises:
        ValueError: two entries are one source once their credentials are set aside
            (the same feed with two tokens), or a URL cannot be read.
    """
    specs = parse_sources(configured)
    shown = [_shown(spec.public) for spec in specs]
    counts: dict[str, int] = {}
    for name in shown:
        counts[name] = counts.get(name, 0) + 1
    sources = []
    for spec, name in zip(specs, shown, strict=True):
        sid = source_id(spec.public)
        unique = name if counts[name] == 1 else f"{name} ({sid})"
        sources.append(Source(spec=spec, id=sid, name=unique))
    return tuple(sources)


def _shown(public: str) -> str:
    return redact_url(public)


class SourceSet:
    """The configured sources, looked up by what the store holds (their public identity)."""

    __slots__ = ("_all", "_by_key")

    def __init__(self, configured: Iterable[str]) -> None:
        self._all = identify(tuple(configured))
        self._by_key = {source.key: source for source in self._all}

    def __iter__(self) -> Iterator[Source]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def of(self, key: str) -> Source:
        """The source whose public identity is ``key`` (a ``sources.name``); a source no
        longer configured (a row the store still holds) gets one of its own, named as it
        would be alone."""
        found = self._by_key.get(key)
        if found is not None:
            return found
        spec = SourceSpec(public=public_identity(key), kind=source_kind(key))
        return Source(spec=spec, id=source_id(spec.public), name=_shown(spec.public))
