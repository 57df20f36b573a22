"""Discord: Components V2 messages, and the channel that sends and receives them.

``components`` renders digests and replies within Discord's limits; loading this package
registers it with :mod:`bot.render`. The rest loads only where Discord is configured
(:mod:`.connect`): ``rest`` (the REST API over aiohttp: buckets, the global limit, invalid
requests), ``sender`` (messages -> channels, for the delivery engine), ``interactions``
(``POST /discord/interactions`` -> the command core), ``commands`` (the application
commands, from the registry).
"""

from __future__ import annotations

from dataclasses import replace

from bot import render
from bot.channels.discord import components
from bot.channels.discord.payload import DiscordPayload, payload
from bot.channels.discord.spec import PLATFORM as PLATFORM
from bot.models import Button, Digest, Outgoing, Reply

__all__ = ["PLATFORM"]  # what bot.channels.registry loads


def _messages(rendered: list[tuple[str, tuple[dict[str, object], ...]]]) -> list[Outgoing]:
    return [Outgoing(text=plain, payload=DiscordPayload(components=c)) for plain, c in rendered]


def _digest(digest: Digest) -> list[Outgoing]:
    return _messages(components.render_digest(digest))


def _reply(reply: Reply) -> list[Outgoing]:
    return _messages(components.render_reply(reply))


def _text(body: str) -> list[Outgoing]:
    return [Outgoing(text=piece, plain=True) for piece in components.plain_pieces(body)]


def _toggle(out: list[Outgoing], toggle: Button) -> list[Outgoing]:
    """The toggle's row under the digest: at the end of its last message, or a message of
    its own where that one is full."""
    last = payload(out[-1])
    if not last.components:
        return out
    placed = components.with_toggle(last.components, toggle)
    if placed is not None:
        out[-1] = replace(out[-1], payload=DiscordPayload(components=placed))
        return out
    row = tuple(components.rows([[toggle]]))
    return [*out, Outgoing(text=toggle.label, payload=DiscordPayload(components=row))]


render.register(
    PLATFORM.rules.name,
    render.PlatformRenderer(digest=_digest, reply=_reply, text=_text, toggle=_toggle),
)
