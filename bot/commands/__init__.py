"""The chat commands: one core for Telegram, Slack and the console, and a module per area.

:mod:`bot.commands.registry` declares every command and button once, beside its handler in
its area's module; :mod:`bot.commands.core` runs them, handing each the ports of
:mod:`bot.commands.base`. The core names no area: this package imports every module of
it, below, so each area has declared its commands and buttons before a command runs. A new
area is a new module here (and its texts in the catalogues): no other module changes.

The names below are the package's public face: what the channels, the web routes, the
application and the tests take from it. An area's own names are imported from its module
(``bot.commands.schedule``, ``bot.commands.settings_page``...), each with its ``__all__``.
"""

import importlib
import pkgutil

from bot.commands import registry, settings_page
from bot.commands.base import (
    STOPPED,
    AdminPort,
    Caller,
    ChatStatus,
    Defaults,
    DigestPort,
    echo,
    refusal_key,
    split_command,
    suggest_command,
)
from bot.commands.core import CommandCore
from bot.commands.feedback import FEEDBACK_RESET
from bot.commands.help import COMMAND_ORDER, help_text
from bot.commands.schedule import describe_next, find_timezone
from bot.commands.subscription import TAGS_SHOWN, TOGGLE, describe_filter

# Every module of the package, so that each area's declarations are in the registry, and
# each admin part's builder in the admin module's (bot.commands.admin_parts).
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

# Derived from the registry once every area has declared its commands.
KNOWN_COMMANDS = frozenset(COMMAND_ORDER)

__all__ = [
    "COMMAND_ORDER",
    "FEEDBACK_RESET",
    "KNOWN_COMMANDS",
    "STOPPED",
    "TAGS_SHOWN",
    "TOGGLE",
    "AdminPort",
    "Caller",
    "ChatStatus",
    "CommandCore",
    "Defaults",
    "DigestPort",
    "describe_filter",
    "describe_next",
    "echo",
    "find_timezone",
    "help_text",
    "refusal_key",
    "registry",
    "settings_page",
    "split_command",
    "suggest_command",
]
