"""The language toggle under a digest: ``English`` / ``한국어``. Pure.

A chat reads its digests in its language; the toggle re-renders one digest in the other
one, where its pages have both (a page in one language shows in it, with a note saying
so). The button's action names the target language and the outbox row the digest was
sent from (``lang:ko:123``), which holds its pages: Telegram's 64 bytes of callback data
could not hold a digest's page ids.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot import render
from bot.i18n import LANGUAGES, SOURCE, t
from bot.models import Button, Outgoing, Page, Platform

TOGGLE = "lang:"
MAX_ROW_ID = 2**63 - 1  # outbox.id is a 64-bit integer column
AUDIT_ACTION = "digest.toggled"  # the audit log's entry of a press, which ``stats`` counts
ACTION_ID = "trend:lang"  # Slack: the toggle's action_id (bot/channels/slack/)


def other(lang: str) -> str:
    """The language the toggle offers to a ``lang`` chat: the source language (English),
    and to a chat in it the first other language of the catalogues."""
    if lang != SOURCE:
        return SOURCE
    return next((other for other in LANGUAGES if other != SOURCE), SOURCE)


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


def offered(pages: Sequence[Page], lang: str) -> bool:
    """Whether a digest of ``pages`` for a ``lang`` chat gets a toggle: some page of it
    has a text in the other language."""
    to = other(lang)
    return any(to in page.languages for page in pages)


def button(to: str, row_id: int) -> Button:
    """The toggle to ``to``, labelled in that language (``한국어``)."""
    return Button(label=t(to, "render.toggle"), action=action(to, row_id))


def with_toggle(platform: Platform, parts: Sequence[Outgoing], toggle: Button) -> list[Outgoing]:
    """``parts`` with ``toggle`` under the digest, as the platform's renderer puts it (on
    Telegram a last keyboard row of the last message, on Slack an actions block ending the
    first message)."""
    if not parts:
        return list(parts)
    return render.renderer(platform).toggle(list(parts), toggle)
