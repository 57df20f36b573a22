"""The chat commands, declared once, in the order people see them. Pure.

Help, the Telegram command menus (one per scope and language) and the console's completion
all read this table, so a command added here appears in all of them, in the same place.
Each entry names its one-line help (``line.NAME`` in the catalogues: ``{p}name ARGS —
description``; a menu shows the description), who may use it, and whether a group's
members see it in their menu.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Audience(enum.StrEnum):
    """Who may use a command."""

    EVERYONE = "everyone"  # reads only: anyone, in any chat
    MANAGERS = "managers"  # changes the chat: in a group, its administrators only
    BOT_ADMINS = "bot_admins"  # the bot's operators (ADMIN_IDS) only


@dataclass(frozen=True, slots=True)
class Command:
    """One chat command.

    ``group_menu``: whether the members of a group see it in their menu (Telegram shows
    private chats and group administrators every command a chat may use).
    """

    name: str
    audience: Audience
    group_menu: bool = False
    menu: bool = True  # in the command menus at all (``start`` is the platform's own)

    @property
    def line_key(self) -> str:
        """The catalogue key of its one-line help."""
        return f"line.{self.name}"

    @property
    def help_key(self) -> str:
        """The catalogue key of ``help NAME``: the command with examples."""
        return f"help.{self.name}"


_E, _M, _A = Audience.EVERYONE, Audience.MANAGERS, Audience.BOT_ADMINS

COMMANDS: tuple[Command, ...] = (
    Command("start", _E, menu=False),
    Command("help", _E, group_menu=True),
    Command("subscribe", _M),
    Command("unsubscribe", _M),
    Command("tags", _E, group_menu=True),
    Command("settings", _E, group_menu=True),
    Command("mode", _M),
    Command("time", _M),
    Command("timezone", _M),
    Command("lang", _M),
    Command("pause", _M),
    Command("resume", _M),
    Command("latest", _E, group_menu=True),
    Command("digest", _M),
    Command("limit", _M),
    Command("quiet", _M),
    Command("feedback", _E),
    Command("why", _E),
    Command("feed", _M),
    Command("export", _E),
    Command("import", _M),
    Command("broadcast", _A),
    Command("stats", _A),
    Command("alerts", _A),
)

BY_NAME: dict[str, Command] = {command.name: command for command in COMMANDS}
NAMES: tuple[str, ...] = tuple(command.name for command in COMMANDS)


def for_caller(*, bot_admin: bool) -> tuple[Command, ...]:
    """The commands a caller may use, in order: the bot's admins see theirs too."""
    return tuple(c for c in COMMANDS if bot_admin or c.audience != Audience.BOT_ADMINS)


def menu(*, group_member: bool) -> tuple[Command, ...]:
    """The commands of a menu: every command a chat may use (private chats and group
    administrators), or those a group's members see. The bot's admins' commands are in
    no menu: a menu is the same for everyone in its scope."""
    return tuple(
        c for c in for_caller(bot_admin=False) if c.menu and (c.group_menu or not group_member)
    )
