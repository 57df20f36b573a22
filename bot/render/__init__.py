"""Renderers: digests and replies as each platform's messages. Pure.

``text`` (the console) is here; each platform package of :mod:`bot.channels` renders within
its own limits (Telegram HTML within 4096 characters, Slack Block Kit) and registers its
:class:`PlatformRenderer` as it loads, so this stage never imports the channels above it.
The functions here pick the renderer for a platform and wrap its output in
:class:`~bot.models.Outgoing` messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from bot.models import Button, Digest, DigestItem, Outgoing, Platform, Reply
from bot.render import text, votes


@dataclass(frozen=True, slots=True)
class PlatformRenderer:
    """A platform's messages: a digest's, a reply's, a plain text's (a broadcast, no
    markup interpreted), and a rendered digest with the language toggle under it."""

    digest: Callable[[Digest], list[Outgoing]]
    reply: Callable[[Reply], list[Outgoing]]
    text: Callable[[str], list[Outgoing]]
    toggle: Callable[[list[Outgoing], Button], list[Outgoing]]


_RENDERERS: dict[Platform, PlatformRenderer] = {}


def register(platform: Platform, renderer: PlatformRenderer) -> None:
    """Called by a platform package (``bot.channels.telegram``...) as it loads."""
    _RENDERERS[platform] = renderer


def renderer(platform: Platform) -> PlatformRenderer | None:
    """The platform's renderer; None for the console, which reads plain text."""
    if platform == Platform.CONSOLE:
        return None
    try:
        return _RENDERERS[platform]
    except KeyError:
        raise LookupError(
            f"no renderer for {platform.value}: import bot.channels.{platform.value}"
        ) from None


def digest_messages(platform: Platform, digest: Digest) -> list[Outgoing]:
    if (chosen := renderer(platform)) is not None:
        return chosen.digest(digest)
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
    if (chosen := renderer(platform)) is not None:
        return chosen.reply(reply)
    return [Outgoing(text=text.render_reply(reply))]


def text_message(platform: Platform, body: str) -> list[Outgoing]:
    """A plain text (a broadcast): no markup is interpreted on any platform."""
    if (chosen := renderer(platform)) is not None:
        return chosen.text(body)
    return [Outgoing(text=body, plain=True)]
