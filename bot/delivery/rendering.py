"""Rendering claimed rows: a digest or an instant page rendered once for every chat that
gets the same messages (same platform, language, filter, pages and day), a text as it is.

The pages of a claim are loaded with it (:class:`Claimed`), so each message is rendered
with its pages as they were when it was claimed, without a query per message.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from bot import payloads, render
from bot.models import Outgoing, Page
from bot.render import toggle
from bot.rules import digest as digest_stage
from bot.store import pages as page_store
from bot.store.chats import ChatRecord
from bot.store.engine import reader
from bot.store.outbox import OutboxRow

# Rendered digests kept for later claims (a claim's own are kept with it): chats with the
# same language, filter and pages get the same messages, and a claim holds 500 rows at most.
RENDERED_KEPT = 4096


@dataclass(eq=False, slots=True)
class Claimed:
    """What the rows of one claim share: their pages, as they were at the claim, and the
    messages rendered from them (chats with the same language and filter get the same)."""

    pages: Mapping[int, Page]
    rendered: dict[tuple[object, ...], tuple[Outgoing, ...]] = field(default_factory=dict)


class Renderer:
    """The messages of outbox rows, rendered once for all the chats that get the same;
    the pages of each claimed row are those its claim loaded (:meth:`keep`)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._claimed: dict[int, Claimed] = {}  # by outbox row id, until it is rendered
        # Messages rendered, by what they were rendered from (the pages included), across
        # claims; the least recently used go first.
        self._rendered: OrderedDict[tuple[object, ...], tuple[Outgoing, ...]] = OrderedDict()

    def keep(self, row_id: int, claimed: Claimed) -> None:
        """The row was claimed with these pages."""
        self._claimed[row_id] = claimed

    def forget(self, row_id: int) -> None:
        """The row left memory (done, or given back to the queue)."""
        self._claimed.pop(row_id, None)

    def clear(self) -> None:
        """Every claimed row left memory (the engine stopped)."""
        self._claimed.clear()

    async def render(self, record: ChatRecord, row: OutboxRow) -> list[Outgoing]:
        chat = record.chat
        content = row.content()
        if not isinstance(content, payloads.Digest | payloads.Instant):
            return render.text_message(chat.platform, content.text)
        entries = content.pages
        digest = content if isinstance(content, payloads.Digest) else None
        claimed = self._claimed.pop(row.id, None)
        if claimed is None:
            async with reader(self._engine).connect() as conn:
                claimed = Claimed(
                    await page_store.load_pages(conn, [page_id for page_id, _ in entries])
                )
        day = digest.date if digest is not None and digest.date else row.created_at.date()
        # Everything the (pure) digest and render stages read: equal keys, equal messages.
        ranked = digest is not None and digest.ranked
        more = len(digest.rest) if digest is not None else 0
        welcome = digest is not None and digest.welcome
        key = (chat.platform, chat.lang, chat.filter, entries, day, row.kind, ranked, more, welcome)
        parts = claimed.rendered.get(key)
        if parts is None:
            # Rendered for an earlier claim from the same pages, as they were then?
            loaded = claimed.pages
            versions = tuple(loaded.get(page_id) for page_id, _ in entries)
            parts = self._rendered.get((key, versions))
            if parts is not None:
                self._rendered.move_to_end((key, versions))
                claimed.rendered[key] = parts
        if parts is None:
            built = digest_stage.build_digest(
                lang=chat.lang,
                filter=chat.filter,
                candidates=[(loaded[pid], updated) for pid, updated in entries if pid in loaded],
                today=day,
                instant=row.kind == "page",
                welcome=welcome,
            )
            if built:
                built = digest_stage.as_planned(
                    built,
                    page_ids=[pid for pid, _ in entries],
                    pages=loaded,
                    ranked=ranked,
                    more=more,
                )
            parts = tuple(render.digest_messages(chat.platform, built)) if built else ()
            claimed.rendered[key] = parts
            self._rendered[(key, versions)] = parts
            if len(self._rendered) > RENDERED_KEPT:
                self._rendered.popitem(last=False)
        shown = [claimed.pages[pid] for pid, _ in entries if pid in claimed.pages]
        to = toggle.target(shown, chat.lang) if parts else None
        if to is not None:
            # Per row, after the (shared) rendering: the toggle names this row.
            return toggle.with_toggle(chat.platform, parts, toggle.button(to, row.id))
        return list(parts)


def pages_of(row: OutboxRow) -> tuple[payloads.Entry, ...] | None:
    """The pages of a digest or instant row; None for a text or a malformed row."""
    try:
        content = row.content()
    except payloads.PayloadError:
        return None
    return content.pages if isinstance(content, payloads.Digest | payloads.Instant) else None
