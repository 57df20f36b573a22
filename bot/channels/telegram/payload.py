"""What a Telegram message carries beside its HTML text."""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import Outgoing


@dataclass(frozen=True, slots=True)
class TelegramPayload:
    """A Telegram message's reply markup and rich form.

    ``markup`` is a reply markup (inline keyboard). ``rich`` is the JSON text of a
    ``sendRichMessage`` ``rich_message`` that says all that this message and the ones after
    it marked ``rich_covered`` say: a sender that may send rich messages to the chat sends
    it instead of the text, and sends nothing for the covered ones; one that may not sends
    them all as HTML.
    """

    markup: dict[str, object] | None = None
    rich: str | None = None
    rich_covered: bool = False


def payload(message: Outgoing) -> TelegramPayload:
    """``message``'s Telegram payload; an empty one for a text alone."""
    found = message.payload
    return found if isinstance(found, TelegramPayload) else TelegramPayload()
