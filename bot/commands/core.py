"""One command core for Telegram, Slack and the console.

A channel turns an inbound update into a :class:`~bot.commands.base.Caller` and the command
text, calls :meth:`CommandCore.handle`, and renders the :class:`~bot.models.Reply` it gets
back. The core knows nothing of any platform: it parses, checks who may use the command
(its declaration in :mod:`bot.commands.registry`), applies it to the store, and answers in
the chat's language. The commands themselves live in one module per area, as functions
declared with the registry (a command with :func:`~bot.commands.registry.command`, a
button with :func:`~bot.commands.registry.action`): the core dispatches by the registry
and imports no area, so a new area is a new module, and this one is left as it is. It
hands each handler the :class:`~bot.commands.base.Ports` it builds once (the store, the
digest planner, the admin module), or a :class:`~bot.commands.base.Context` carrying them.

The settings page's routes call the core too: those calls are passed to
:mod:`bot.commands.settings_page` as they are.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import dberrors, metrics, payloads
from bot.commands import registry
from bot.commands import settings_page as page
from bot.commands.base import (
    MAX_COMMAND_CHARS,
    STOPPED,
    AdminPort,
    Caller,
    ChatStatus,
    Context,
    Defaults,
    DigestPort,
    Ports,
    answer,
    chat_record,
    echo,
    may_manage,
    refusal_key,
    split_command,
    suggest_command,
)
from bot.errors import FilterError, NotInChannel
from bot.i18n import clean, negotiate, t
from bot.models import (
    ChatState,
    Filter,
    Platform,
    Reply,
    Toast,
    Toggled,
)
from bot.render import toggle
from bot.rules import digest as digest_stage
from bot.store import admin as admin_store
from bot.store import chats as chat_store
from bot.store import current, outbox
from bot.store import merges as merge_store
from bot.store import pages as page_store
from bot.store import settings_links as link_store
from bot.store import teams as team_store
from bot.store import topics as topic_store
from bot.store.engine import reader

__all__ = ["CommandCore"]

log = logging.getLogger("bot.commands")


class CommandCore:
    """Runs the chat commands the registry declares (see the module's docstring)."""

    def __init__(
        self,
        *,
        engine: AsyncEngine,
        defaults: Defaults,
        digests: DigestPort | None = None,
        admin: AdminPort | None = None,
        public_base_url: str | None = None,
    ) -> None:
        self.ports = Ports(
            engine=engine,
            reader=reader(engine),
            defaults=defaults,
            digests=digests,
            admin=admin,
            public_base_url=public_base_url,
        )

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
        lang = negotiate(caller.language_code, default=self.ports.defaults.lang)
        return Reply(lang, t(lang, key))

    async def removed_from_chat(self, *, platform: Platform, chat_id: str) -> int:
        """The bot was removed from chat ``chat_id`` (or banned, or the chat archived): it
        and its forum topics become inactive and get nothing until a command revives them.

        Returns:
            How many chats became inactive (0: a chat the bot never knew).
        """
        return await topic_store.remove_bot(self.ports.engine, platform=platform, chat_id=chat_id)

    async def chat_moved(self, *, platform: Platform, old_chat_id: str, new_chat_id: str) -> bool:
        """The platform moved a chat to a new id (a Telegram group became a supergroup):
        its subscription, ledger and queued messages move with it.

        Returns:
            False when the old chat was never seen (nothing to move).
        """
        return await merge_store.move(
            self.ports.engine, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
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
        record = await chat_store.read(self.ports.engine, platform=platform, chat_id=chat_id)
        if record is None:
            return None
        if team_id is not None and record.team_id != team_id:
            await team_store.record_workspace(
                self.ports.engine, pk=record.pk, team_id=team_id, enterprise_id=enterprise_id
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
            self.ports.engine, platform=platform, chat_id=chat_id, reason=reason, code=code
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
            self.ports.engine,
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
            self.ports.engine, platform=platform, old_chat_id=old_chat_id, new_chat_id=new_chat_id
        )

    async def _handle(self, caller: Caller, text: str, *, prefix: str) -> Reply:
        name, args = split_command(text)
        if len(text) > MAX_COMMAND_CHARS:
            return await self.ports.in_chat(caller, answer("cmd.too_long"), write=False)
        declared = registry.find(name)
        if declared is None:
            command = echo(name or text)
            suggestion = suggest_command(name) if name else None
            if suggestion is not None:
                unknown = answer(
                    "cmd.did_you_mean", command=command, suggestion=suggestion, p=prefix
                )
            else:
                unknown = answer("cmd.unknown", command=command, p=prefix)
            return await self.ports.in_chat(caller, unknown, write=False)
        if declared.audience == registry.MANAGERS and not await may_manage(caller):
            key = refusal_key(caller, declared.group_refusal)
            return await self.ports.in_chat(caller, answer(key, p=prefix), write=False)
        if declared.alone:
            return await declared.handler(self.ports, caller, name=name, args=args, prefix=prefix)

        async def run(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
            ctx = Context(ports=self.ports, caller=caller, prefix=prefix, conn=conn)
            return await declared.handler(record, args, ctx)

        return await self.ports.in_chat(caller, run, write=declared.writes)

    async def hint(self, caller: Caller, *, prefix: str = "/") -> Reply:
        """The answer to a message that is not a command (plain text in a private chat):
        one line that names ``help``, not the whole list of commands."""
        return await self.ports.in_chat(caller, answer("cmd.plain_hint", p=prefix), write=False)

    async def handle_action(
        self, caller: Caller, action: str, *, prefix: str = "/"
    ) -> Reply | Toast | None:
        """A button press. Returns the updated message, a :class:`Toast` for the one who
        pressed (the message stays), or None when nothing should change.

        A button an area declared (:func:`~bot.commands.registry.action`) runs its handler;
        any other goes to the admin module (a broadcast's confirmation)."""
        handler = registry.find_action(action)
        if handler is not None:
            return await handler(self.ports, caller, action, prefix=prefix)
        admin = self.ports.admin
        if admin is None:
            return None
        record = await self.ports.in_chat(caller, chat_record, write=False)
        return await admin.handle_action(caller, action=action, lang=record.chat.lang)

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

        return await self.ports.in_chat(caller, run, write=True)

    async def tag_names(self, *, limit: int) -> list[str]:
        """The ``limit`` most used tags of present pages (the console completes them)."""
        async with self.ports.reader.connect() as conn:
            counts = await current.tag_counts(conn)
        return [clean(tag) for tag, _ in counts[:limit]]

    # The settings page ---------------------------------------------------------------------

    async def open_page_privately(self, caller: Caller) -> page.PrivateLink | Toast:
        """See :func:`bot.commands.settings_page.open_page_privately`."""
        return await page.open_page_privately(self.ports, caller)

    async def settings_link(self, conn: AsyncConnection, *, chat_pk: int) -> str | None:
        """See :func:`bot.commands.settings_page.settings_link`."""
        return await page.settings_link(self.ports, conn, chat_pk=chat_pk)

    async def open_settings_link(self, token: str) -> link_store.Opened | link_store.Refusal:
        """See :func:`bot.commands.settings_page.open_settings_link`."""
        return await page.open_settings_link(self.ports, token)

    async def peek_settings_link(self, token: str) -> page.Door | link_store.Refusal:
        """See :func:`bot.commands.settings_page.peek_settings_link`."""
        return await page.peek_settings_link(self.ports, token)

    async def open_settings_app(
        self, *, platform: Platform, user_id: str
    ) -> link_store.Opened | None:
        """See :func:`bot.commands.settings_page.open_settings_app`."""
        return await page.open_settings_app(self.ports, platform=platform, user_id=user_id)

    async def settings_session(self, session: str) -> int | None:
        """See :func:`bot.commands.settings_page.settings_session`."""
        return await page.settings_session(self.ports, session)

    async def page_view(self, chat_pk: int) -> page.PageView | None:
        """See :func:`bot.commands.settings_page.page_view`."""
        return await page.page_view(self.ports, chat_pk)

    async def page_new_feed(self, chat_pk: int) -> str | None:
        """See :func:`bot.commands.settings_page.page_new_feed`."""
        return await page.page_new_feed(self.ports, chat_pk)

    async def page_preview(self, filter_text: str, *, today: dt.date) -> page.Preview | FilterError:
        """See :func:`bot.commands.settings_page.page_preview`."""
        return await page.page_preview(self.ports, filter_text, today=today)

    async def save_page(
        self, chat_pk: int, *, fields: dict[str, str], paused: bool, prefix: str
    ) -> page.Saved | page.Refused | None:
        """See :func:`bot.commands.settings_page.save_page`."""
        return await page.save_page(
            self.ports, chat_pk, fields=fields, paused=paused, prefix=prefix
        )
