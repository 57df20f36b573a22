"""One declaration of the commands: help, the Telegram menus and the console's completion
list every command a caller may use, in one order (issue: replies true, item 12)."""

from __future__ import annotations

import pytest

from bot.channels.console.chat import complete
from bot.channels.telegram.channel import menu_commands
from bot.commands import help_text, registry
from bot.commands.registry import BOT_ADMINS, EVERYONE, Menu
from bot.i18n import t


def help_names(lang: str, *, bot_admin: bool) -> list[str]:
    lines = help_text(lang, prefix="/", bot_admin=bot_admin).splitlines()
    return [line.split()[0].removeprefix("/") for line in lines if line.startswith("/")]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_help_lists_every_command_once_in_the_table_order(lang: str) -> None:
    text = help_text(lang, prefix="/", bot_admin=False)
    assert help_names(lang, bot_admin=False) == [
        c.name for c in registry.for_caller(bot_admin=False)
    ]
    assert help_names(lang, bot_admin=True) == list(registry.NAMES)
    # One block: the pointer to `help COMMAND` comes last, not between two lists.
    assert text.splitlines()[-1] == t(lang, "cmd.help_more", p="/")
    assert "/mode daily | weekly" in text
    assert "broadcast" not in text


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_menus_follow_the_same_table(lang: str) -> None:
    names = [c.command for c in menu_commands(lang)]
    assert names == [n for n in help_names(lang, bot_admin=False) if n != "start"]
    declared = registry.commands()
    assert names == [c.name for c in declared if c.menu != Menu.NONE and c.audience != BOT_ADMINS]
    members = [c.command for c in menu_commands(lang, group_member=True)]
    assert members == [c.name for c in declared if c.menu == Menu.GROUP]


def test_a_group_s_members_are_shown_only_commands_they_may_use() -> None:
    """A group's menu shows its members what any of them may use: commands for everyone
    (which change nothing of the chat's settings: `latest` only records what it showed)."""
    readers = [c for c in registry.commands() if c.menu == Menu.GROUP]
    assert readers and all(c.audience == EVERYONE for c in readers)
    assert {c.name for c in readers} & {"subscribe", "mode", "pause", "lang"} == set()


def test_console_completion_offers_every_command_in_order() -> None:
    offered = [name.removeprefix("/") for name in complete("/", ())]
    assert offered[: len(registry.NAMES)] == list(registry.NAMES)


def test_every_command_has_a_line_and_a_help_in_both_languages() -> None:
    from bot.i18n import has

    for command in registry.commands():
        assert has(command.line_key) and has(command.help_key), command.name
