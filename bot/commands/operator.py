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

The commands are in modules of their own, each a half of :class:`Admin`:
:mod:`bot.commands.broadcast` and :mod:`bot.commands.stats`; both keep the audit trail of
:mod:`bot.commands.audit`.
"""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from bot import platforms
from bot.commands import Caller, audit
from bot.commands.broadcast import BroadcastCommands
from bot.commands.stats import StatsCommands
from bot.models import Reply
from bot.settings import Settings
from bot.sources import SourceSet

__all__ = [
    "Admin",
]

log = logging.getLogger("bot.admin")


class Admin(BroadcastCommands, StatsCommands):
    """Implements the command core's ``AdminPort`` and the delivery's broadcast tracker."""

    def __init__(self, *, engine: AsyncEngine, settings: Settings) -> None:
        self._engine = engine
        self._sources = SourceSet(settings.wiki_sources)
        self._platforms = {rules.name: rules for rules in platforms.registered()}
        self._admins = {rules.name: rules.admins(settings) for rules in platforms.registered()}

    def is_admin(self, caller: Caller) -> bool:
        """An admin of the deployment or, on Slack, of the caller's workspace."""
        return self.is_deployment_admin(caller) or (
            self._workspace_admins(caller) and caller.workspace_admin
        )

    def _workspace_admins(self, caller: Caller) -> bool:
        rules = self._platforms.get(caller.platform)
        return rules is not None and rules.workspace_admins

    def is_deployment_admin(self, caller: Caller) -> bool:
        """One of ``TELEGRAM_ADMIN_IDS`` or ``SLACK_ADMIN_IDS``, or the console's operator."""
        rules = self._platforms.get(caller.platform)
        return rules is not None and (rules.operator or self.alert_admin_id(caller) is not None)

    def alert_admin_id(self, caller: Caller) -> str | None:
        """The ``TELEGRAM_ADMIN_IDS`` or ``SLACK_ADMIN_IDS`` entry ``caller`` is, under which
        their ``alerts on|off`` is kept and alerts are sent (:mod:`bot.ops.alert_service`); None
        for anyone else, the console's operator and a workspace's admin included: alerts
        are of the whole deployment, and go to its admins' private chats alone."""
        check = self._admins.get(caller.platform)
        return None if check is None else check(caller.user_id, caller.workspace)

    def _workspace_only(self, caller: Caller) -> str | None:
        """The workspace a Slack workspace's installer (not a deployment admin) is limited
        to; an installer whose workspace is unknown sees an empty one, never everything."""
        if self._workspace_admins(caller) and not self.is_deployment_admin(caller):
            return caller.workspace or "-"
        return None

    async def refused(self, caller: Caller, *, name: str) -> None:
        log.warning("refused %s for a non-admin", name, extra={"chat": audit.chat_address(caller)})
        async with self._engine.begin() as conn:
            await audit.record(conn, caller, action=f"{name}.refused", allowed=False)

    async def handle(
        self, caller: Caller, *, name: str, args: str, lang: str, prefix: str = "/"
    ) -> Reply:
        if name == "stats":
            return await self.stats(caller, lang=lang, prefix=prefix)
        return await self.preview(caller, args=args, lang=lang, prefix=prefix)
