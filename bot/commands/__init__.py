"""The chat commands: one core for Telegram, Slack and the console, and a module per area.

:mod:`bot.commands.registry` declares every command once; :mod:`bot.commands.core` runs
them; each other module holds one area's handlers and declares its commands beside them.
The names below are the package's public surface.
"""

from bot.commands.base import (
    STOPPED,
    AdminPort,
    Caller,
    ChatStatus,
    Defaults,
    DigestPort,
    echo,
    split_command,
    suggest_command,
)
from bot.commands.core import CommandCore
from bot.commands.destinations import transfer_error_text
from bot.commands.feedback import FEEDBACK_RESET
from bot.commands.help import COMMAND_ORDER, help_text
from bot.commands.registry import Audience
from bot.commands.schedule import (
    describe_next,
    describe_schedule,
    find_timezone,
    format_wait,
    parse_quiet,
    parse_weekday,
    weekday_name,
)
from bot.commands.subscription import TAGS_SHOWN, TOGGLE, describe_filter

# Derived from the registry once every handler module has declared its commands.
KNOWN_COMMANDS = frozenset(COMMAND_ORDER)

__all__ = [
    "COMMAND_ORDER",
    "FEEDBACK_RESET",
    "KNOWN_COMMANDS",
    "STOPPED",
    "TAGS_SHOWN",
    "TOGGLE",
    "AdminPort",
    "Audience",
    "Caller",
    "ChatStatus",
    "CommandCore",
    "Defaults",
    "DigestPort",
    "describe_filter",
    "describe_next",
    "describe_schedule",
    "echo",
    "find_timezone",
    "format_wait",
    "help_text",
    "parse_quiet",
    "parse_weekday",
    "split_command",
    "suggest_command",
    "transfer_error_text",
    "weekday_name",
]
