"""One command core for Telegram, Slack and the console.

A channel turns an inbound update into a :class:`~bot.commands.base.Caller` and the command
text, calls :meth:`CommandCore.handle`, and renders the :class:`~bot.models.Reply` it gets
back. The core knows nothing of any platform: it parses, checks who may use the command
(its declaration in :mod:`bot.commands.registry`), applies it to the store, and answers in
the chat's language. The commands themselves live in one module per area, each a mixin
of :class:`~bot.commands.base.CommandBase` the core inherits.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from bot import dberrors, metrics, payloads
from bot.commands import registry
from bot.commands.admin import AdminCommands
from bot.commands.base import (
    MAX_COMMAND_CHARS,
    STOPPED,
    Caller,
    ChatStatus,
    _answer,
    _Context,
    _record,
    echo,
    split_command,
    suggest_command,
)
from bot.commands.destinations import DestinationCommands
from bot.commands.digests import DigestCommands
from bot.commands.feedback import FEEDBACK_RESET, FeedbackCommands
from bot.commands.help import HelpCommands
from bot.commands.schedule import ScheduleCommands
from bot.commands.settings_page import SettingsPageCommands
from bot.commands.subscription import TOGGLE, SubscriptionCommands
from bot.errors import NotInChannel
from bot.i18n import clean, negotiate, t
from bot.models import (
    ChatState,
    Filter,
    Platform,
    Reply,
    Toast,
    Toggled,
)
from bot.render import toggle, votes
from bot.rules import digest as digest_stage
from bot.store import admin as admin_store
from bot.store import chats as chat_store
from bot.store import current, outbox
from bot.store import merges as merge_store
from bot.store import pages as page_store
from bot.store import teams as team_store
from bot.store import topics as topic_store

log = logging.getLogger("bot.commands")


class CommandCore(
    SubscriptionCommands,
    ScheduleCommands,
    DigestCommands,
    FeedbackCommands,
    DestinationCommands,  # before HelpCommands: it builds on its settings text
    SettingsPageCommands,
    HelpCommands,
    AdminCommands,
):
    """Runs the chat commands the registry declares (see the module's docstring)."""

    # Entry points -----------------------------------------------------------------------

    async def handle(self, caller: Caller, text: str, *, prefix: str = "/") -> Reply:
        """Run one command. ``prefix`` is how the channel spells commands in help texts."""
        name, _ = split_command(text)
        label = name if registry.find(name) is not None else "unknown"
        started = time.perf_counter()
        try:
            return await self._handle(caller, text, prefix=prefix)
        except Exception as exc:
            if not dberrors.is_outage(exc):
                raise
            return self._not_stored(caller, exc)
        finally:
            metrics.COMMANDS.labels(caller.platform.value, label).inc()
            metrics.COMMAND_LATENCY.labels(label).observe(time.perf_counter() - started)

    def _not_stored(self, caller: Caller, exc: BaseException) -> Reply:
        """The answer to a command the database could not carry out (full, taking no
        writes, away): the reason in the user's words, in the caller's language (the chat's
        cannot be read for sure). Nothing was changed: a command is one transaction."""
        reason = dberrors.reason(exc)
        log.warning("command not carried out: database error: %s", reason)
        lowered = reason.lower()
        if "full" in lowered or "no space left" in lowered:
            key = "cmd.store.full"
        elif "readonly" in lowered or "read-only" in lowered or "read only" in lowered:
            key = "cmd.store.read_only"
        else:
            key = "cmd.store.away"
        lang = negotiate(caller.language_code, default=self._defaults.lang)
        return Reply(lang, t(lang, key))

    async def removed_from_chat(self, *, platform: Platform, chat_id: str) -> int:
        """The bot was removed from chat ``chat_id`` (or banned, or the chat archived): it
        and its forum topics become inactive and get nothing until a command revives them.

        Returns:
            How many chats became inactive (0: a chat the bot never knew).
        """
        return await topic_store.remove_bot(self._engine, platform=platform, chat_id=chat_id)

    async def chat_moved(self, *, platform: Platform, old_chat_id: str, new_chat_id: str) -> bool:
        """The platform moved a chat to a new id (a Telegram group became a supergroup):
        its subscription, ledger and queued messages move with it.

        Returns:
            False when the old chat was never seen (nothing to move).
        """
        return await merge_store.move(
            self._engine, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
        )

    async def chat_status(
        self,
        *,
        platform: Platform,
        chat_id: str,
        team_id: str | None = None,
        enterprise_id: str | None = None,
    ) -> ChatStatus | None:
        """The chat's language and delivery state, as a channel needs them around a command.

        With ``team_id`` (Slack: the workspace the request came from), a chat that does not
        know that workspace records it, with its Enterprise Grid organisation
        ``enterprise_id``: the workspace's token sends to the chat from then on.

        Returns:
            None for a chat never seen (nothing is created).
        """
        record = await chat_store.read(self._engine, platform=platform, chat_id=chat_id)
        if record is None:
            return None
        if team_id is not None and record.team_id != team_id:
            await team_store.record_workspace(
                self._engine, pk=record.pk, team_id=team_id, enterprise_id=enterprise_id
            )
        chat = record.chat
        return ChatStatus(
            lang=chat.lang,
            state=chat.state,
            waits_for_invite=(
                chat.state == ChatState.PAUSED and record.inactive_code == NotInChannel.CODE
            ),
        )

    async def chat_gone(self, *, platform: Platform, chat_id: str, reason: str, code: str) -> bool:
        """The platform says chat ``chat_id`` can take no more messages (a Slack channel
        archived or deleted): it becomes inactive for ``reason`` (``code``, a short stable
        word) and what was queued for it fails.

        Returns:
            False when the chat was never seen or is inactive already (nothing changed).
        """
        return await chat_store.stop(
            self._engine, platform=platform, chat_id=chat_id, reason=reason, code=code
        )

    async def chat_reachable(
        self,
        *,
        platform: Platform,
        chat_id: str,
        codes: frozenset[str],
        states: frozenset[ChatState] = STOPPED,
        since: dt.datetime | None = None,
    ) -> bool:
        """The platform says chat ``chat_id`` can be posted to again (the bot was invited
        back, the channel unarchived): if it stopped for one of ``codes`` (at ``since`` or
        later, when given) and is in one of ``states``, it is active again, and gets what is
        published from now on.

        A chat stopped for another reason (its members paused it) stays as it is.

        Returns:
            Whether the chat became active.
        """
        return await chat_store.reactivate(
            self._engine,
            platform=platform,
            chat_id=chat_id,
            codes=codes,
            states=states,
            since=since,
        )

    async def chat_readdressed(
        self, *, platform: Platform, old_chat_id: str, new_chat_id: str
    ) -> bool:
        """The platform addresses a chat differently from now on (a Slack DM kept under its
        conversation id, now under the user's id): it moves to ``new_chat_id``, unless a
        chat already has that id (then both stay as they are).

        Returns:
            Whether the chat moved.
        """
        return await merge_store.readdress(
            self._engine, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
        )

    async def _handle(self, caller: Caller, text: str, *, prefix: str) -> Reply:
        name, args = split_command(text)
        if len(text) > MAX_COMMAND_CHARS:
            return await self._in_chat(caller, _answer("cmd.too_long"), write=False)
        declared = registry.find(name)
        if declared is None:
            command = echo(name or text)
            suggestion = suggest_command(name) if name else None
            if suggestion is not None:
                unknown = _answer(
                    "cmd.did_you_mean", command=command, suggestion=suggestion, p=prefix
                )
            else:
                unknown = _answer("cmd.unknown", command=command, p=prefix)
            return await self._in_chat(caller, unknown, write=False)
        if declared.audience == registry.MANAGERS and not await self._may_manage(caller):
            key = declared.group_refusal
            return await self._in_chat(caller, _answer(key, p=prefix), write=False)
        if declared.alone:
            return await declared.handler(self, caller, name=name, args=args, prefix=prefix)

        async def run(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
            ctx = _Context(caller=caller, prefix=prefix, conn=conn)
            return await declared.handler(self, record, args, ctx)

        return await self._in_chat(caller, run, write=declared.writes)

    async def hint(self, caller: Caller, *, prefix: str = "/") -> Reply:
        """The answer to a message that is not a command (plain text in a private chat):
        one line that names ``help``, not the whole list of commands."""
        return await self._in_chat(caller, _answer("cmd.plain_hint", p=prefix), write=False)

    async def handle_action(
        self, caller: Caller, action: str, *, prefix: str = "/"
    ) -> Reply | Toast | None:
        """A button press. Returns the updated message, a :class:`Toast` for the one who
        pressed (the message stays), or None when nothing should change."""
        if action.startswith(votes.VOTE):
            return await self._vote(caller, action)
        if action.startswith(FEEDBACK_RESET):
            return await self._feedback_reset(caller, action, prefix=prefix)
        if action.startswith(TOGGLE):
            if not await self._may_manage(caller):
                return await self._in_chat(caller, _answer("cmd.group_admins_only"), write=False)

            async def toggle(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
                tag = action.removeprefix(TOGGLE)
                return await self._toggle(conn, record, tag, prefix=prefix)

            return await self._in_chat(caller, toggle, write=True)
        if self._admin is None:
            return None
        record = await self._in_chat(caller, _record, write=False)
        return await self._admin.handle_action(caller, action=action, lang=record.chat.lang)

    async def toggle_language(self, caller: Caller, action: str) -> Toggled | Reply:
        """A digest's language toggle (``lang:ko:123``): the digest of outbox row 123 built
        again in Korean, or a reply saying why it cannot be (a malformed action, a row that
        is no digest of the caller's chat). Each press is counted (metric and audit log,
        which ``stats`` reads)."""
        parsed = toggle.parse(action)

        async def run(conn: AsyncConnection, record: chat_store.ChatRecord) -> Toggled | Reply:
            lang = record.chat.lang
            if parsed is None:
                return Reply(lang, t(lang, "render.toggle_gone"))
            to, row_id = parsed
            row = await outbox.one(conn, row_id=row_id)
            content: payloads.Payload | None = None
            if row is not None and row.chat_pk == record.pk:
                try:
                    content = row.content()
                except payloads.PayloadError:
                    content = None
            if row is None or not isinstance(content, payloads.Digest | payloads.Instant):
                return Reply(lang, t(lang, "render.toggle_gone"))
            entries = content.pages
            pages = await page_store.load_pages(conn, [pid for pid, _ in entries])
            digest = content if isinstance(content, payloads.Digest) else None
            candidates = [(pages[pid], updated) for pid, updated in entries if pid in pages]
            day = digest.date if digest is not None and digest.date else row.created_at.date()
            built = None
            # The chat's filter says which tags matched; one changed since matches all.
            for chat_filter in (record.chat.filter, Filter(everything=True)):
                built = built or digest_stage.build_digest(
                    lang=to,
                    filter=chat_filter,
                    candidates=candidates,
                    today=day,
                    instant=row.kind == payloads.INSTANT,
                    welcome=digest is not None and digest.welcome,
                )
            if built is None:
                return Reply(lang, t(lang, "render.toggle_gone"))
            built = digest_stage.as_planned(
                built,
                page_ids=[pid for pid, _ in entries],
                pages=pages,
                ranked=digest is not None and digest.ranked,
                more=len(digest.rest) if digest is not None else 0,
            )
            built = replace(built, items=tuple(replace(i, toggled=True) for i in built.items))
            await admin_store.audit(
                conn,
                actor=f"{caller.platform.value}:{caller.user_id}",
                chat=f"{caller.platform.value}:{caller.chat_id}",
                action=toggle.AUDIT_ACTION,
                allowed=True,
                detail={"lang": to, "row": row_id},
            )
            metrics.LANGUAGE_TOGGLES.labels(caller.platform.value, to).inc()
            return Toggled(digest=built, row_id=row_id)

        return await self._in_chat(caller, run, write=True)

    async def tag_names(self, *, limit: int) -> list[str]:
        """The ``limit`` most used tags of present pages (the console completes them)."""
        async with self._reader.connect() as conn:
            counts = await current.tag_counts(conn)
        return [clean(tag) for tag, _ in counts[:limit]]
