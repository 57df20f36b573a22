"""The console as a platform (:mod:`bot.channels.platform`): always on, its one local
user the deployment's operator, its messages printed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot import platforms, render
from bot.channels.console.render import RENDERER
from bot.channels.platform import Inbound, Opening, PlatformSpec
from bot.models import Platform

if TYPE_CHECKING:
    from bot.commands import CommandCore
    from bot.delivery.sender import Sender

CONSOLE = Platform.CONSOLE


@dataclass(slots=True)
class ConsoleConnection:
    """The console's printer. Its chat window is the ``trendbot console`` command's
    (:meth:`bot.app.App.console_channel`), not a channel the service runs."""

    sender: Sender

    def inbound(self, core: CommandCore) -> Inbound | None:
        return None

    async def close(self) -> None:
        return None


def _connect(opening: Opening) -> ConsoleConnection:
    from bot.channels.console.chat import ConsoleSender

    return ConsoleConnection(sender=ConsoleSender(out=opening.console_out))


RULES = platforms.PlatformRules(
    name=CONSOLE, enabled=lambda _settings: True, operator=True, remote=False
)
PLATFORM = PlatformSpec(rules=RULES, connect=_connect)

platforms.register(RULES)
render.register(CONSOLE, RENDERER)
