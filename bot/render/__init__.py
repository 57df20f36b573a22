"""Renderers: digests and replies as each platform's messages. Pure.

``telegram`` (HTML within 4096 characters), ``slack`` (Block Kit within its limits) and
``text`` (the console) each render the same data; the functions here pick the renderer
for a platform and wrap its output in :class:`~bot.models.Outgoing` messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.channels.slack import blocks as slack
from bot.channels.telegram import html as telegram
from bot.channels.telegram import rich as telegram_rich
from bot.models import Button, Digest, DigestItem, Outgoing, Platform, Reply
from bot.render import text, votes


def digest_messages(platform: Platform, digest: Digest) -> list[Outgoing]:
    if platform == Platform.TELEGRAM:
        parts = [Outgoing(text=h, markup=m) for h, m in telegram.render_digest_parts(digest)]
        return with_rich(parts, telegram_rich.render_digest(digest))
    if platform == Platform.SLACK:
        # Each page a collapsible container; today's sections where a workspace refuses it.
        summary, replies = slack.render_digest_containers(digest)
        return [
            Outgoing(text=m.text, blocks=m.blocks, fallback_blocks=m.fallback_blocks, in_thread=t)
            for m, t in [(summary, False), *((r, True) for r in replies)]
        ]
    return [Outgoing(text=text.render_digest(digest), buttons=vote_buttons(digest.items))]


def with_rich(parts: list[Outgoing], rich: str | None) -> list[Outgoing]:
    """``parts`` with the rich message that says all of them: on the first, and the others
    marked as covered by it (see :class:`~bot.models.Outgoing`)."""
    if rich is None or not parts:
        return parts
    first, *rest = parts
    return [replace(first, rich=rich), *(replace(p, rich_covered=True) for p in rest)]


def vote_buttons(items: Sequence[DigestItem]) -> tuple[Button, ...]:
    """The 👍 and 👎 of each numbered page that can be voted on (labelled ``3 👍``)."""
    numbered = enumerate(items, start=1)
    return tuple(button for number, item in numbered for button in votes.buttons(number, item))


def reply_messages(platform: Platform, reply: Reply) -> list[Outgoing]:
    if platform == Platform.TELEGRAM:
        return [Outgoing(text=h, markup=m) for h, m in telegram.render_reply_parts(reply)]
    if platform == Platform.SLACK:
        message = slack.render_reply(reply)
        return [Outgoing(text=message.text, blocks=message.blocks)]
    return [Outgoing(text=text.render_reply(reply))]


def text_message(platform: Platform, body: str) -> list[Outgoing]:
    """A plain text (a broadcast): no markup is interpreted on any platform."""
    if platform == Platform.TELEGRAM:
        pieces = text.split_text(body, telegram.MAX_MESSAGE_CHARS, cost=telegram.escaped_cost)
        return [Outgoing(text=piece, plain=True) for piece in pieces]
    if platform == Platform.SLACK:
        pieces = text.split_text(body, slack.MAX_SECTION_TEXT, cost=slack.escaped_cost)
        return [Outgoing(text=slack.escape(piece), plain=True) for piece in pieces]
    return [Outgoing(text=body, plain=True)]
