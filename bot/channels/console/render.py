"""The console's messages: plain text, and the vote buttons its text shows numbered."""

from __future__ import annotations

from dataclasses import dataclass

from bot import render
from bot.models import Button, Digest, Outgoing, Reply
from bot.render import text


@dataclass(frozen=True, slots=True)
class ConsolePayload:
    """What a console message carries beside its text: the buttons its text shows (the
    console presses them by number)."""

    buttons: tuple[Button, ...] = ()


def payload(message: Outgoing) -> ConsolePayload:
    """``message``'s console payload; an empty one for a text alone."""
    found = message.payload
    return found if isinstance(found, ConsolePayload) else ConsolePayload()


def _digest(digest: Digest) -> list[Outgoing]:
    buttons = render.vote_buttons(digest.items)
    return [Outgoing(text=text.render_digest(digest), payload=ConsolePayload(buttons=buttons))]


def _reply(reply: Reply) -> list[Outgoing]:
    return [Outgoing(text=text.render_reply(reply))]


def _text(body: str) -> list[Outgoing]:
    return [Outgoing(text=body, plain=True)]


def _toggle(out: list[Outgoing], _toggle: Button) -> list[Outgoing]:
    return out  # one language at a time: the console's chat sets it


RENDERER = render.PlatformRenderer(digest=_digest, reply=_reply, text=_text, toggle=_toggle)
