"""Admin commands: broadcast with preview and confirmation, stats, and the audit trail.

The deployment's admins are the user ids in ``TELEGRAM_ADMIN_IDS`` and ``SLACK_ADMIN_IDS``
(never user names; a Slack entry is ``TEAM:USER``, or a bare user id with one workspace);
the console's local user is the operator of its own database and counts as one. With Slack
installed by OAuth, the user who installed the app in a workspace is that workspace's admin:
their ``stats`` and ``broadcast`` reach their workspace's chats and deliveries only, never
the sources, the pages, the queue or another workspace.

A broadcast reaches every chat that follows something (a chat that never subscribed, or
unsubscribed from everything, asked for nothing), narrowed by ``--tag``, ``--platform`` and
``--lang``; paused and inactive chats are skipped and counted.

A broadcast is rows in the same outbox as digests, paced by the same limits. Fairness:
digests and instant pages are claimed before broadcast rows (a higher priority), and each
chat's messages go out in order at that chat's limit. A digest is therefore never held up
behind a large broadcast, and a broadcast is held up only by the digests already due,
which are finite: one a chat a day, plus instant pages.

The admin module is made of parts (:mod:`bot.commands.admin_parts`), one per area, each
in a module of its own and built from what it uses: :mod:`bot.commands.broadcast` and
:mod:`bot.commands.stats`. :class:`Admin` checks who may act, then dispatches by the
tables its parts fill (their commands by name, their buttons by prefix); every part keeps
the audit trail of :mod:`bot.commands.audit`.
"""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.commands import audit
from bot.commands.admin_parts import AdminCommand, Admins, Needs, Part, Press, builders
from bot.commands.base import Caller
from bot.commands.broadcast import Broadcasts
from bot.commands.stats import Statistics, Stats
from bot.i18n import t
from bot.models import Reply
from bot.settings import Settings

__all__ = [
    "Admin",
]

P = TypeVar("P")


class Admin:
    """Implements the command core's ``AdminPort``, the delivery's broadcast tracker
    (:meth:`broadcast_row_done`) and the figures ``trendbot stats`` reads (:meth:`figures`),
    from its parts.

    Raises:
        ValueError: two parts answer one command, or a button's prefix starts another's.
    """

    def __init__(self, *, engine: AsyncEngine, settings: Settings) -> None:
        self._engine = engine
        self.admins = Admins.of(settings)
        needs = Needs(engine=engine, admins=self.admins, settings=settings)
        self.parts: tuple[Part, ...] = tuple(build(needs) for build in builders())
        self._commands: dict[str, AdminCommand] = {}
        self._presses: dict[str, Press] = {}
        for built in self.parts:
            for name, handler in built.commands.items():
                if name in self._commands:
                    raise ValueError(f"admin command {name!r} is answered twice")
                self._commands[name] = handler
            for prefix, press in built.presses.items():
                for taken in self._presses:
                    if taken.startswith(prefix) or prefix.startswith(taken):
                        raise ValueError(f"admin button {prefix!r} overlaps {taken!r}")
                self._presses[prefix] = press
        self._broadcasts = self.part(Broadcasts)
        self._statistics = self.part(Statistics)

    def part(self, kind: type[P]) -> P:
        """The part of type ``kind``.

        Raises:
            LookupError: no part of that type was declared.
        """
        for built in self.parts:
            if isinstance(built, kind):
                return built
        raise LookupError(f"no admin part {kind.__name__}")

    def is_admin(self, caller: Caller) -> bool:
        """An admin of the deployment or, on Slack, of the caller's workspace."""
        return self.admins.is_admin(caller)

    def is_deployment_admin(self, caller: Caller) -> bool:
        """One of ``TELEGRAM_ADMIN_IDS`` or ``SLACK_ADMIN_IDS``, or the console's operator."""
        return self.admins.is_deployment_admin(caller)

    def alert_admin_id(self, caller: Caller) -> str | None:
        """See :meth:`bot.commands.admin_parts.Admins.alert_admin_id`."""
        return self.admins.alert_admin_id(caller)

    async def refused(self, caller: Caller, *, name: str) -> None:
        """Log and audit a non-admin's attempt at the command ``name``."""
        await audit.refuse(self._engine, caller, name=name)

    async def handle(
        self, caller: Caller, *, name: str, args: str, lang: str, prefix: str = "/"
    ) -> Reply:
        """The admin command ``name``, for an admin (the caller checks :meth:`is_admin`).

        Raises:
            LookupError: no part answers ``name``.
        """
        handler = self._commands.get(name)
        if handler is None:
            raise LookupError(f"no admin command {name!r}")
        return await handler(caller, args=args, lang=lang, prefix=prefix)

    async def handle_action(self, caller: Caller, *, action: str, lang: str) -> Reply | None:
        """A press of an admin command's button: what its part answers, the refusal for a
        non-admin (audited), or None for a button no part declared."""
        for prefix, press in self._presses.items():
            if not action.startswith(prefix):
                continue
            if not self.is_admin(caller):
                await self.refused(caller, name=press.command)
                return Reply(lang, t(lang, "cmd.admins_only"))
            return await press.run(caller, action=action, lang=lang)
        return None

    async def broadcast_row_done(self, broadcast_id: int) -> None:
        """Called by the delivery engine when a row of the broadcast was completed: see
        :meth:`bot.commands.broadcast.Broadcasts.row_done`."""
        await self._broadcasts.row_done(broadcast_id)

    async def figures(
        self,
        conn: AsyncConnection,
        *,
        workspace: str | None = None,
        created_by: str | None = None,
    ) -> Stats:
        """The figures of ``stats`` (``trendbot stats``): see
        :meth:`bot.commands.stats.Statistics.figures`."""
        return await self._statistics.figures(conn, workspace=workspace, created_by=created_by)
