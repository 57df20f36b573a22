"""The chat commands and the buttons, each declared once, next to its handler. Pure.

An area's module declares its commands with :func:`command`, on the function that answers
them, and its buttons with :func:`action`, on the function a press of one runs: the
command core dispatches by these tables and names no area (the package imports every
module of it, so each has declared its own before the core runs). Every list of commands
is read from here, in one order: the permission checks and the dispatch of the command
core, ``help`` and ``help COMMAND``, the Telegram menus (one per scope and language), the
console's completion, "did you mean", the commands Slack acknowledges before answering,
the Slack manifest's usage hint and the commands reference.

A command's one-line help is ``line.NAME`` in the catalogues (``{p}name ARGS —
description``; a menu shows the description), its ``help COMMAND`` text ``help.NAME``.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar, overload

from bot.models import Reply, Toast

__all__ = [
    "BOT_ADMINS",
    "EVERYONE",
    "MANAGERS",
    "NAMES",
    "ActionHandler",
    "Audience",
    "Command",
    "Handler",
    "Menu",
    "action",
    "action_prefixes",
    "command",
    "commands",
    "find",
    "find_action",
    "for_caller",
    "menu",
    "usage_hint",
]


class Audience(enum.StrEnum):
    """Who may use a command."""

    EVERYONE = "everyone"  # reads only: anyone, in any chat
    MANAGERS = "managers"  # changes the chat: in a group, its administrators only
    BOT_ADMINS = "bot_admins"  # the deployment's admins (ADMIN_IDS) only


EVERYONE, MANAGERS, BOT_ADMINS = Audience.EVERYONE, Audience.MANAGERS, Audience.BOT_ADMINS


class Menu(enum.StrEnum):
    """Which command menus show a command (Telegram: one per scope)."""

    NONE = "none"  # in no menu (``start`` is the platform's own button)
    CHAT = "chat"  # private chats and a group's administrators
    GROUP = "group"  # also a group's members: the commands that only read


# A command's handler, a function of its area's module. In the chat's transaction (the
# default): ``(record, args, ctx) -> Reply``, ``ctx`` a :class:`bot.commands.base.Context`;
# on its own (``alone``): ``(ports, caller, *, name, args, prefix) -> Reply``, ``ports`` the
# core's :class:`bot.commands.base.Ports`.
Handler = Callable[..., Awaitable[Reply]]
H = TypeVar("H", bound=Handler)
# A button's handler: ``(ports, caller, action, *, prefix) -> Reply | Toast | None`` (the
# updated message, a note for the one who pressed, or nothing to change), given the whole
# action its prefix starts.
ActionHandler = Callable[..., Awaitable[Reply | Toast | None]]
A = TypeVar("A", bound=ActionHandler)


@dataclass(frozen=True, slots=True)
class Command:
    """One chat command.

    ``order`` places it in help, the menus and completion (smallest first); ``writes``: its
    handler writes the chat in the transaction that reads it; ``alone``: it runs outside the
    chat's transaction (it opens its own, or none); ``slow``: Slack acknowledges it at once
    and answers through ``response_url``; ``usage``: its arguments as the Slack manifest's
    usage hint shows them (None: not in the hint); ``group_refusal``: the catalogue key of
    the answer to a group member who may not use it.
    """

    name: str
    handler: Handler
    order: int
    audience: Audience
    writes: bool = False
    alone: bool = False
    slow: bool = False
    menu: Menu = Menu.CHAT
    usage: str | None = None
    group_refusal: str = "cmd.group_admins_only"

    @property
    def line_key(self) -> str:
        """The catalogue key of its line in help (``line.NAME``)."""
        return f"line.{self.name}"

    @property
    def help_key(self) -> str:
        """The catalogue key of ``help NAME``: the command with examples (``help.NAME``)."""
        return f"help.{self.name}"


_REGISTRY: dict[str, Command] = {}
_ACTIONS: dict[str, ActionHandler] = {}


def command(
    name: str,
    *,
    order: int,
    audience: Audience,
    writes: bool = False,
    alone: bool = False,
    slow: bool = False,
    menu: Menu = Menu.CHAT,
    usage: str | None = None,
    group_refusal: str = "cmd.group_admins_only",
) -> Callable[[H], H]:
    """Declare the function it decorates as the handler of command ``name``.

    Raises:
        ValueError: a name or an order declared twice (at import: two commands would
            answer one name, or help would list them in no defined order).
    """

    def register(handler: H) -> H:
        if name in _REGISTRY:
            raise ValueError(f"command {name!r} is declared twice")
        if any(c.order == order for c in _REGISTRY.values()):
            raise ValueError(f"command {name!r}: order {order} is taken")
        _REGISTRY[name] = Command(
            name=name,
            handler=handler,
            order=order,
            audience=audience,
            writes=writes,
            alone=alone,
            slow=slow,
            menu=menu,
            usage=usage,
            group_refusal=group_refusal,
        )
        return handler

    return register


def action(prefix: str) -> Callable[[A], A]:
    """Declare the function it decorates as what a press of a button whose action starts
    with ``prefix`` runs (``vote:`` for the 👍/👎 under a page).

    Raises:
        ValueError: a prefix that starts another or is started by one (at import: a press
            would have two handlers).
    """

    def register(handler: A) -> A:
        for taken in _ACTIONS:
            if taken.startswith(prefix) or prefix.startswith(taken):
                raise ValueError(f"action prefix {prefix!r} overlaps {taken!r}")
        _ACTIONS[prefix] = handler
        return handler

    return register


def find_action(action: str) -> ActionHandler | None:
    """The handler of a button's ``action``, or None (the admin module's buttons, a stale
    or forged one)."""
    for prefix, handler in _ACTIONS.items():
        if action.startswith(prefix):
            return handler
    return None


def action_prefixes() -> tuple[str, ...]:
    """Every declared button prefix, sorted."""
    return tuple(sorted(_ACTIONS))


def commands() -> tuple[Command, ...]:
    """Every command, in the order people see them."""
    return tuple(sorted(_REGISTRY.values(), key=lambda c: c.order))


def find(name: str) -> Command | None:
    """The command called ``name`` (lower case, no slash), or None."""
    return _REGISTRY.get(name)


def for_caller(*, bot_admin: bool) -> tuple[Command, ...]:
    """The commands a caller may use, in order: the bot's admins see theirs too."""
    return tuple(c for c in commands() if bot_admin or c.audience != Audience.BOT_ADMINS)


def menu(*, group_member: bool) -> tuple[Command, ...]:
    """The commands of a menu: every command a chat may use (private chats and group
    administrators), or those a group's members see. The bot's admins' commands are in
    no menu: a menu is the same for everyone in its scope."""
    shown = (Menu.GROUP,) if group_member else (Menu.GROUP, Menu.CHAT)
    return tuple(c for c in for_caller(bot_admin=False) if c.menu in shown)


def usage_hint() -> str:
    """The Slack manifest's usage hint of the slash command: ``help | subscribe TAG...``."""
    return " | ".join(f"{c.name} {c.usage}".strip() for c in commands() if c.usage is not None)


class _Names(Sequence[str]):
    """The commands' names in order, read from the registry when used (the areas' modules
    declare their commands as they are imported, after this module)."""

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return tuple(c.name for c in commands())[index]

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(c.name for c in commands()))

    def __contains__(self, name: object) -> bool:
        return name in _REGISTRY

    def __repr__(self) -> str:
        return repr(tuple(self))


NAMES: Sequence[str] = _Names()
