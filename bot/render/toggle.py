"""The language toggle under a digest: ``English`` / ``한국어``. Pure.

A chat reads its digests in its language; the toggle re-renders one digest in another
language its pages are written in (a page in one language shows in it, with a note saying
so). The button's action names the target language and the outbox row the digest was
sent from (``lang:ko:123``), which holds its pages: Telegram's 64 bytes of callback data
could not hold a digest's page ids.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot import render
from bot.i18n import LANGUAGES, t
from bot.models import Button, Digest, Outgoing, Page, Platform

TOGGLE = "lang:"
MAX_ROW_ID = 2**63 - 1  # outbox.id is a 64-bit integer column
AUDIT_ACTION = "digest.toggled"  # the audit log's entry of a press, which ``stats`` counts
ACTION_ID = "trend:lang"  # Slack: the toggle's action_id (bot/channels/slack/)


def target(pages: Sequence[Page], lang: str) -> str | None:
    """The language the toggle offers a ``lang`` reader of ``pages``: among the languages the
    pages have a text in, other than ``lang``, the first of the catalogues (the source
    language first); None when no page has another. A language the bot speaks but no page
    is written in is never offered."""
    have = {other for page in pages for other in page.languages}
    return next((other for other in LANGUAGES if other != lang and other in have), None)


def action(to: str, row_id: int) -> str:
    """``lang:ko:123``: at most 28 bytes, within Telegram's 64 of callback data."""
    return f"{TOGGLE}{to}:{row_id}"


def parse(data: str) -> tuple[str, int] | None:
    """``(language, row id)`` of a toggle action, or None when ``data`` is not one."""
    if not data.startswith(TOGGLE):
        return None
    lang, _, rest = data.removeprefix(TOGGLE).partition(":")
    if lang not in LANGUAGES or not rest.isascii() or not rest.isdigit() or len(rest) > 19:
        return None
    row_id = int(rest)
    return (lang, row_id) if 0 < row_id <= MAX_ROW_ID else None


def back(digest: Digest, row_id: int) -> Button | None:
    """The toggle under ``digest`` shown again (after a press), naming the language to go
    back to; None when its pages have no other."""
    to = target([item.page for item in digest.items], digest.lang)
    return button(to, row_id) if to is not None else None


def button(to: str, row_id: int) -> Button:
    """The toggle to ``to``, labelled in that language (``한국어``)."""
    return Button(label=t(to, "render.toggle"), action=action(to, row_id))


def with_toggle(
    platform: Platform, parts: Sequence[Outgoing], toggle: Button | None
) -> list[Outgoing]:
    """``parts`` with ``toggle`` under the digest, as the platform's renderer puts it (on
    Telegram a last keyboard row of the last message, on Slack an actions block ending the
    first message); ``parts`` as they are without one."""
    if not parts or toggle is None:
        return list(parts)
    return render.renderer(platform).toggle(list(parts), toggle)
