"""Renderers: digests and replies as each platform's messages. Pure.

``text`` (plain text, the console's) is here; each platform package of :mod:`bot.channels`
renders within its own limits (Telegram HTML within 4096 characters, Slack Block Kit, plain
text) and registers its :class:`PlatformRenderer` as it loads, so this stage never imports
the channels above it.
The functions here pick the renderer for a platform and wrap its output in
:class:`~bot.models.Outgoing` messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.models import Button, Digest, DigestItem, Outgoing, Platform, Reply
from bot.render import votes

__all__ = [
    "PlatformRenderer",
    "digest_messages",
    "register",
    "renderer",
    "reply_messages",
    "text_message",
    "vote_buttons",
]


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


def renderer(platform: Platform) -> PlatformRenderer:
    """The platform's renderer, registered by its package."""
    try:
        return _RENDERERS[platform]
    except KeyError:
        raise LookupError(
            f"no renderer for {platform.value}: import bot.channels.{platform.value}"
        ) from None


def digest_messages(platform: Platform, digest: Digest) -> list[Outgoing]:
    return renderer(platform).digest(digest)


def vote_buttons(items: Sequence[DigestItem]) -> tuple[Button, ...]:
    """The 👍 and 👎 of each numbered page that can be voted on (labelled ``3 👍``)."""
    numbered = enumerate(items, start=1)
    return tuple(button for number, item in numbered for button in votes.buttons(number, item))


def reply_messages(platform: Platform, reply: Reply) -> list[Outgoing]:
    return renderer(platform).reply(reply)


def text_message(platform: Platform, body: str) -> list[Outgoing]:
    """A plain text (a broadcast): no markup is interpreted on any platform."""
    return renderer(platform).text(body)
