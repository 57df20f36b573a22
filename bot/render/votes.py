"""The 👍 and 👎 buttons under each page of a digest, an instant message or ``latest``. Pure.

Every renderer numbers the pages of a message (``1.``, ``2.``, ...) and labels a page's
buttons with its number; a button's action names the page by its store id.
"""

from __future__ import annotations

from bot.models import Button, DigestItem

VOTE = "vote:"
UP, DOWN = "+", "-"
UP_MARK, DOWN_MARK = "👍", "👎"
MAX_PAGE_ID = 2**31 - 1  # pages.id is a 32-bit integer column; a larger id is no page


def action(page_id: int, *, up: bool) -> str:
    """``vote:+:12``: at most 26 bytes, well within Telegram's 64 of callback data."""
    return f"{VOTE}{UP if up else DOWN}:{page_id}"


def parse(data: str) -> tuple[int, bool] | None:
    """``(page_id, up)`` of a vote action, or None when ``data`` is not a well-formed one."""
    if not data.startswith(VOTE):
        return None
    sign, _, rest = data.removeprefix(VOTE).partition(":")
    if sign not in (UP, DOWN) or not rest.isascii() or not rest.isdigit():
        return None
    page_id = int(rest[:12])
    if len(rest) > 12 or page_id > MAX_PAGE_ID:
        return None
    return page_id, sign == UP


def buttons(number: int, item: DigestItem) -> tuple[Button, ...]:
    """``[3 👍] [3 👎]`` for the page numbered ``number``; none for a page without an id."""
    if item.page_id is None:
        return ()
    return (
        Button(label=f"{number} {UP_MARK}", action=action(item.page_id, up=True)),
        Button(label=f"{number} {DOWN_MARK}", action=action(item.page_id, up=False)),
    )


def numbered(number: int, title: str) -> str:
    return f"{number}. {title}"
