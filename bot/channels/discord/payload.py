"""What a Discord message carries beside its plain text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.models import Outgoing


@dataclass(frozen=True, slots=True)
class DiscordPayload:
    """A Components V2 message: its top-level ``components`` (containers, text displays,
    action rows), sent with the ``IS_COMPONENTS_V2`` flag. A message without components is
    its ``Outgoing.text`` as ``content``."""

    components: tuple[dict[str, Any], ...] = ()


def payload(message: Outgoing) -> DiscordPayload:
    """``message``'s Discord payload; an empty one for a text alone."""
    found = message.payload
    return found if isinstance(found, DiscordPayload) else DiscordPayload()
