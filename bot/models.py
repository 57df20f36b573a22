"""Value objects that flow through the stages: sources -> pages -> matching -> digests.

Everything here is immutable data. The stages that produce and consume it are pure
functions (``pages``, ``filters``, ``digest``, ``render``); the store and the channels
translate between these objects and the outside world.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from bot import papers
from bot.i18n import LANGUAGES as LANGUAGES  # the files of bot/i18n/locales/, English first
from bot.i18n import match


def normalize_lang(value: object) -> str | None:
    """Map a language tag (``ko``, ``en-US``, ``ko_KR``) to one of the bot's languages.

    Returns:
        One of :data:`LANGUAGES`, or None when ``value`` names none of them.
    """
    return match(value)


class _Platforms(type):
    """:class:`Platform`'s metaclass: the names declared so far, in the order declared,
    iterated and looked up as an enum's members are."""

    _declared: dict[str, Platform]

    def __iter__(cls) -> Iterator[Platform]:
        return iter(tuple(cls._declared.values()))

    def __call__(cls, value: object) -> Platform:
        found = cls._declared.get(value) if isinstance(value, str) else None
        if found is None:
            raise ValueError(f"{value!r} is not a platform")
        return found


class Platform(str, metaclass=_Platforms):
    """A chat platform's name, as chats are stored (``chats.platform``) and addressed
    (``telegram:1001``). Open: each platform package of :mod:`bot.channels` declares its own
    (:func:`bot.platforms.register`); ``Platform(name)`` raises ValueError for a name none
    declared. The platforms the bot ships with are named here as well, for the stored rows
    and the call sites that name them."""

    __slots__ = ()
    _declared: ClassVar[dict[str, Platform]] = {}
    TELEGRAM: ClassVar[Platform]
    SLACK: ClassVar[Platform]
    CONSOLE: ClassVar[Platform]

    @classmethod
    def declare(cls, name: str) -> Platform:
        """The platform ``name`` (lowercase letters, at most 16: ``chats.platform``),
        declared once; declaring it again returns the same one."""
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,15}", name):
            raise ValueError(f"{name!r} is not a platform name")
        found = cls._declared.get(name)
        if found is None:
            found = cls._declared[name] = str.__new__(cls, name)
        return found

    @property
    def value(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"Platform({self.value!r})"


Platform.TELEGRAM = Platform.declare("telegram")
Platform.SLACK = Platform.declare("slack")
Platform.CONSOLE = Platform.declare("console")


class ChatState(enum.StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    INACTIVE = "inactive"  # blocked, removed, archived: nothing is sent


class Mode(enum.StrEnum):
    DAILY = "daily"
    INSTANT = "instant"
    WEEKLY = "weekly"  # one digest a week, on ``ChatSettings.weekday``


class ChatKind(enum.StrEnum):
    PRIVATE = "private"
    GROUP = "group"  # a Telegram group/supergroup or a Slack channel


class ChangeKind(enum.StrEnum):
    NEW = "new"
    UPDATED = "updated"


@dataclass(frozen=True, slots=True)
class PageText:
    """One language version of a page."""

    lang: str
    title: str
    tldr: str


@dataclass(frozen=True, slots=True)
class Page:
    """A wiki page with all its languages.

    ``key`` identifies the page inside its source: for a directory source the path relative
    to the root without the language suffix and extension
    (``papers/2026/2608.27351-evolution-strategies-reasoning``); for a feed, the entry id.
    """

    source: str
    key: str
    texts: tuple[PageText, ...]
    tags: tuple[str, ...] = ()
    url: str | None = None
    type: str | None = None
    arxiv: str | None = None
    created: dt.date | None = None
    updated: dt.date | None = None
    doi: str | None = None

    @property
    def paper(self) -> str:
        """The paper's identity across sources (:mod:`bot.papers`): arXiv id, else DOI,
        else the page's path. The store keeps a path identity through renames."""
        return papers.paper_id(arxiv=self.arxiv, doi_value=self.doi, key=self.key)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(t.lang for t in self.texts)

    def text(self, lang: str) -> PageText:
        """The version in ``lang``, else the first one the page has."""
        for t in self.texts:
            if t.lang == lang:
                return t
        return self.texts[0]

    @property
    def date(self) -> dt.date | None:
        return self.updated or self.created

    @property
    def fingerprint(self) -> str:
        """What makes a page *updated*: its ``updated`` date or any TL;DR changed."""
        h = hashlib.blake2b(digest_size=12)
        h.update(str(self.updated or "").encode())
        for t in sorted(self.texts, key=lambda t: t.lang):
            h.update(b"\0" + t.lang.encode() + b"\0" + t.tldr.encode())
        return h.hexdigest()


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
class Skipped:
    """A file or entry that could not be read or parsed, and why."""

    source: str
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Filter:
    """A chat's tag filter.

    A page matches when (``everything``, or it carries one of ``any_of``, or ``any_of`` is
    empty and ``required`` is not) and it carries every tag of ``required`` and none of
    ``excluded``. The empty filter matches nothing.
    """

    any_of: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()
    excluded: frozenset[str] = frozenset()
    everything: bool = False

    @property
    def is_empty(self) -> bool:
        return not (self.any_of or self.required or self.everything)

    @property
    def tags(self) -> frozenset[str]:
        return self.any_of | self.required | self.excluded


@dataclass(frozen=True, slots=True)
class QuietHours:
    """Local wall-clock hours in which nothing is sent; ``end`` before ``start`` wraps midnight."""

    start: dt.time
    end: dt.time

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """A chat's subscription and preferences, as the store holds them."""

    platform: Platform
    chat_id: str
    kind: ChatKind = ChatKind.PRIVATE
    state: ChatState = ChatState.ACTIVE
    mode: Mode = Mode.DAILY
    digest_time: dt.time = dt.time(9, 0)
    timezone: str = "UTC"
    lang: str = "en"
    filter: Filter = field(default_factory=Filter)
    weekday: int = 0  # weekly mode's day, 0 = Monday (``datetime.date.weekday``)
    quiet: QuietHours | None = None
    limit: int | None = None  # at most this many pages a digest, best ranked first

    @property
    def address(self) -> str:
        return f"{self.platform.value}:{self.chat_id}"


@dataclass(frozen=True, slots=True)
class DigestItem:
    page: Page
    matched: tuple[str, ...]
    updated: bool = False
    page_id: int | None = None  # the store's id: what a feedback button refers to
    # Shown by the language toggle: a page without the language asked for says it has none.
    toggled: bool = False


@dataclass(frozen=True, slots=True)
class Digest:
    """What one chat receives at once: a daily digest, or one page in instant mode."""

    lang: str
    date: dt.date
    items: tuple[DigestItem, ...]
    instant: bool = False
    more: int = 0  # pages left out by the chat's limit, reachable with ``latest``
    welcome: bool = False  # a chat's first digest, with recent pages "to get you started"


@dataclass(frozen=True, slots=True)
class Button:
    """An inline button. ``action`` is opaque callback data, at most 64 bytes (Telegram).

    A link button has a ``url`` instead (and no action); ``app`` is the same page as an
    in-app view, where the platform has one (a Telegram Mini App in a private chat).
    """

    label: str
    action: str = ""
    url: str | None = None
    app: str | None = None


@dataclass(frozen=True, slots=True)
class Series:
    """One named line of a ``"lines"`` panel: a value a label of the panel."""

    name: str
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class ChartPanel:
    """One plot of a chart: ``values`` against ``labels``, as a ``"line"`` (a series over
    time, labels in order) or ``"bars"`` (one horizontal bar a label; a negative value is a
    bar to the left, in another colour); or, as ``"lines"``, each of ``series`` against
    ``labels``, named in a legend. ``fallback_title`` is the title in English, drawn
    where no installed font has the characters of ``title``."""

    kind: str
    title: str
    labels: tuple[str, ...]
    values: tuple[float, ...] = ()
    fallback_title: str = ""
    series: tuple[Series, ...] = ()


@dataclass(frozen=True, slots=True)
class Chart:
    """A picture a reply may carry beside its text, as data: a channel that shows images
    renders it (``bot.render.charts``), any other ignores it. ``alt`` says in words, in the reply's
    language, what the picture shows (alt text, caption)."""

    alt: str
    panels: tuple[ChartPanel, ...]


@dataclass(frozen=True, slots=True)
class Reply:
    """What a command answers, before any platform renders it.

    ``text`` is plain text (no markup; renderers escape it), paragraphs separated by a blank
    line. ``items`` are pages shown under the text, rendered like digest entries.
    ``buttons`` are rows of inline buttons. ``chart`` is an optional picture of what the
    text says: it only ever adds to the text, which is complete without it.
    """

    lang: str
    text: str
    items: tuple[DigestItem, ...] = ()
    buttons: tuple[tuple[Button, ...], ...] = ()
    chart: Chart | None = None


@dataclass(frozen=True, slots=True)
class Toggled:
    """A digest again, in the language its toggle asked for: ``digest`` to render, and the
    outbox row it was sent from (what the toggle back refers to)."""

    digest: Digest
    row_id: int


@dataclass(frozen=True, slots=True)
class Toast:
    """A short acknowledgement of a button press, shown to the one who pressed; the message
    with the button stays as it is."""

    lang: str
    text: str


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One platform message, rendered and ready to send.

    ``text`` is the message as the platform's text (Telegram HTML, Slack's plain fallback
    text, the console's plain text). ``payload`` is what else the platform's sender needs,
    of a type the platform's package defines (Slack's blocks, Telegram's keyboard and rich
    message, the console's buttons), None for a text alone. ``plain`` text is sent with no
    markup parsing at all (broadcasts: no formatting injection). ``in_thread`` asks the
    platform to post the message as a reply in the thread of the first message of the same
    delivery (Slack).
    """

    text: str
    payload: object = None
    in_thread: bool = False
    plain: bool = False
