"""What a Slack message carries beside its fallback text."""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import Outgoing


@dataclass(frozen=True, slots=True)
class SlackPayload:
    """A Slack message's Block Kit blocks.

    ``blocks`` are the message's blocks; ``fallback_blocks``, when given, the same content
    in the blocks every workspace takes, posted where Slack refuses ``blocks``
    (``invalid_blocks``: a workspace without the container block).
    """

    blocks: tuple[dict[str, object], ...] = ()
    fallback_blocks: tuple[dict[str, object], ...] = ()


def payload(message: Outgoing) -> SlackPayload:
    """``message``'s Slack payload; an empty one for a text alone."""
    found = message.payload
    return found if isinstance(found, SlackPayload) else SlackPayload()
