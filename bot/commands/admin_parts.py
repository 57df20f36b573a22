"""The parts of the admin module, and the table they fill.

:class:`bot.commands.operator.Admin` is made of parts, one per area of the admins' commands
(:mod:`bot.commands.broadcast`, :mod:`bot.commands.stats`), each in a module of its own.
A part is built from the few things it uses: its module declares a builder with
:func:`part`, which takes them from the :class:`Needs` the admin module hands every builder.
A built part says what it answers (:class:`Part`): its commands by name and its buttons by
the prefix of their action. The admin module dispatches by these tables and names no part
in them, so a new admin area is a new module (its builder declared here, its chat command
declared for the admins in :mod:`bot.commands.admin`, its texts in the catalogues).

:class:`Admins` is who the admins are, which every part asks: the deployment's admins see
and act on everything, a Slack workspace's installer on that workspace alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine

from bot import platforms
from bot.commands.base import Caller
from bot.models import Platform, Reply
from bot.settings import Settings

__all__ = [
    "AdminAction",
    "AdminCommand",
    "Admins",
    "Builder",
    "Needs",
    "Part",
    "Press",
    "builders",
    "part",
]

# An admin command's handler: ``(caller, *, args, lang, prefix) -> Reply``, run for an
# admin only (the admin module checks), ``lang`` the chat's language.
AdminCommand = Callable[..., Awaitable[Reply]]
# What a press of an admin command's button runs: ``(caller, *, action, lang) -> Reply``,
# given the whole action, for an admin only.
AdminAction = Callable[..., Awaitable[Reply]]


@dataclass(frozen=True, slots=True)
class Press:
    """An admin command's button: what a press runs, and the command it belongs to (a
    non-admin's press is audited as a refused attempt at that command)."""

    command: str
    run: AdminAction


class Part(Protocol):
    """An area of the admins' commands, as the admin module dispatches to it."""

    @property
    def commands(self) -> Mapping[str, AdminCommand]:
        """The admin commands it answers, by name (a chat command declared ``BOT_ADMINS``)."""
        ...

    @property
    def presses(self) -> Mapping[str, Press]:
        """Its buttons, by the prefix of their action (none may start another's)."""
        ...


@dataclass(frozen=True, slots=True)
class Admins:
    """Who the admins are, from the settings: each platform's admin variable
    (``TELEGRAM_ADMIN_IDS``, ``SLACK_ADMIN_IDS``...: user ids, never names), the console's
    local user (the operator of its own database) and, on Slack, the user who installed the
    app in a workspace, for that workspace alone."""

    rules: Mapping[Platform, platforms.PlatformRules]
    checks: Mapping[Platform, platforms.AdminCheck]

    @classmethod
    def of(cls, settings: Settings) -> Admins:
        """The admins of the platforms registered, as ``settings`` name them."""
        registered = platforms.registered()
        return cls(
            rules={rules.name: rules for rules in registered},
            checks={rules.name: rules.admins(settings) for rules in registered},
        )

    def is_admin(self, caller: Caller) -> bool:
        """An admin of the deployment or, on Slack, of the caller's workspace."""
        return self.is_deployment_admin(caller) or (
            self._workspace_admins(caller) and caller.workspace_admin
        )

    def is_deployment_admin(self, caller: Caller) -> bool:
        """One of ``TELEGRAM_ADMIN_IDS`` or ``SLACK_ADMIN_IDS``, or the console's operator."""
        rules = self.rules.get(caller.platform)
        return rules is not None and (rules.operator or self.alert_admin_id(caller) is not None)

    def alert_admin_id(self, caller: Caller) -> str | None:
        """The ``TELEGRAM_ADMIN_IDS`` or ``SLACK_ADMIN_IDS`` entry ``caller`` is, under which
        their ``alerts on|off`` is kept and alerts are sent (:mod:`bot.ops.alert_service`); None
        for anyone else, the console's operator and a workspace's admin included: alerts
        are of the whole deployment, and go to its admins' private chats alone."""
        check = self.checks.get(caller.platform)
        return None if check is None else check(caller.user_id, caller.workspace)

    def workspace_only(self, caller: Caller) -> str | None:
        """The one workspace ``caller`` may see and act on, or None for all of them: a
        Slack workspace's installer (not a deployment admin) is limited to theirs; one
        whose workspace is unknown sees an empty one, never everything."""
        if self._workspace_admins(caller) and not self.is_deployment_admin(caller):
            return caller.workspace or "-"
        return None

    def _workspace_admins(self, caller: Caller) -> bool:
        rules = self.rules.get(caller.platform)
        return rules is not None and rules.workspace_admins


@dataclass(frozen=True, slots=True)
class Needs:
    """What the admin module hands each part's builder; a builder takes what its part uses."""

    engine: AsyncEngine
    admins: Admins
    settings: Settings


Builder = Callable[[Needs], Part]
B = TypeVar("B", bound=Builder)

_BUILDERS: list[Builder] = []


def part(build: B) -> B:
    """Declare the function it decorates as the builder of a part of the admin module.

    Raises:
        ValueError: a builder declared twice (at import: its part would answer twice).
    """
    if build in _BUILDERS:
        raise ValueError(f"admin part {build.__qualname__} is declared twice")
    _BUILDERS.append(build)
    return build


def builders() -> tuple[Builder, ...]:
    """Every declared part's builder, in the order they were declared."""
    return tuple(_BUILDERS)
