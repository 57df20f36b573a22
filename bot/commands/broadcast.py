"""``broadcast``: an admin's message to many chats, previewed with the exact text and the
number of chats it reaches, sent only once confirmed, and reported to the admin when every
chat's message is done.

:class:`Broadcasts` is the admin module's part for it (:mod:`bot.commands.admin_parts`),
built from the store and who the admins are alone. Who may broadcast, whom a broadcast
reaches and why it never holds up a digest: see :mod:`bot.commands.operator`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot import payloads, platforms
from bot.commands import audit
from bot.commands.admin_parts import AdminCommand, Admins, Needs, Press, part
from bot.commands.base import Caller
from bot.i18n import clean, language_name, t, tn
from bot.models import LANGUAGES, Button, Platform, Reply
from bot.store import admin as store
from bot.store import chats as chat_store
from bot.store import queueing
from bot.store.admin import Audience
from bot.tags import normalize_tag
from bot.util import utcnow

__all__ = [
    "CANCEL",
    "MAX_BROADCAST_CHARS",
    "SEND",
    "BadOption",
    "Broadcasts",
    "Draft",
    "broadcasts",
    "describe_audience",
    "parse_broadcast",
    "report_lines",
    "skipped_text",
]

SEND = "bc:send:"
CANCEL = "bc:cancel:"
OPTION = re.compile(r"^\s*--(tag|platform|lang)(?:\s+|=)(\S+)")
# A broadcast is one message; longer texts are split by the renderers, but an
# announcement that long is almost certainly a paste error.
MAX_BROADCAST_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Draft:
    text: str
    audience: Audience


class BadOption(ValueError):
    def __init__(self, option: str, accepted: str) -> None:
        super().__init__(option)
        self.option = option
        self.accepted = accepted


def parse_broadcast(args: str) -> Draft:
    """``--tag rl --lang ko The text…`` -> the text and its audience."""
    tags: list[str] = []
    platform = lang = None
    rest = args
    while match := OPTION.match(rest):
        name, value = match[1], match[2]
        rest = rest[match.end() :]
        if name == "tag":
            tag = normalize_tag(value)
            if not tag:
                raise BadOption("--tag", "a tag such as rl")
            tags.append(tag)
        elif name == "platform":
            if value.lower() not in platforms.broadcast_names():
                raise BadOption("--platform", ", ".join(platforms.broadcast_names()))
            platform = value.lower()
        else:
            if value.lower() not in LANGUAGES:
                raise BadOption("--lang", "en, ko")
            lang = value.lower()
    # Cleaned of bidi controls and invisible characters (``clean``): the preview shows
    # exactly what is sent, and neither can display as something it is not.
    return Draft(
        text=clean(rest).strip(),
        audience=Audience(tags=tuple(tags), platform=platform, lang=lang),
    )


def skipped_text(lang: str, skipped: int) -> str:
    """``3 paused or inactive chats are skipped``, or that there are none."""
    return tn(lang, "admin.broadcast.skipped", skipped)


def describe_audience(audience: Audience, lang: str) -> str:
    """Who a broadcast reaches, in words (``active chats following rl, on Telegram, in
    Korean``), never as the options that chose them."""
    parts = []
    if audience.tags:
        parts.append(t(lang, "admin.audience.tags", tags=", ".join(audience.tags)))
    if audience.platform:
        platform = platforms.title(audience.platform, lang)
        parts.append(t(lang, "admin.audience.platform", platform=platform))
    if audience.lang:
        language = language_name(audience.lang, lang)
        parts.append(t(lang, "admin.audience.lang", language=language))
    if not parts:
        return t(lang, "admin.broadcast.everyone")
    return t(lang, "admin.audience.some", parts=t(lang, "admin.audience.join").join(parts))


class Broadcasts:
    """The broadcast part of the admin module: the preview (``broadcast``), its Send and
    Cancel buttons, and the report once the delivery has done every chat's message.

    Its commands and buttons run for an admin only: the admin module checks first.
    """

    def __init__(self, *, engine: AsyncEngine, admins: Admins) -> None:
        self._engine = engine
        self._admins = admins
        self.commands: Mapping[str, AdminCommand] = {"broadcast": self.preview}
        self.presses: Mapping[str, Press] = {
            SEND: Press("broadcast", self.press),
            CANCEL: Press("broadcast", self.press),
        }

    async def preview(self, caller: Caller, *, args: str, lang: str, prefix: str = "/") -> Reply:
        """``broadcast [--tag T] [--platform P] [--lang L] TEXT``: the exact text, who it
        reaches and how many, with Send and Cancel; nothing is queued yet."""
        try:
            draft = parse_broadcast(args)
        except BadOption as exc:
            return Reply(
                lang,
                t(lang, "admin.broadcast.bad_option", option=exc.option, accepted=exc.accepted),
            )
        if not draft.text or len(draft.text) > MAX_BROADCAST_CHARS:
            return Reply(lang, t(lang, "admin.broadcast.usage", p=prefix))
        workspace = self._admins.workspace_only(caller)
        if workspace:
            draft = replace(draft, audience=replace(draft.audience, workspace=workspace))
        async with self._engine.begin() as conn:
            size = await store.audience_size(conn, draft.audience)
            if size.reach == 0:
                return Reply(
                    lang,
                    t(
                        lang,
                        "admin.broadcast.no_audience",
                        audience=describe_audience(draft.audience, lang),
                        skipped=skipped_text(lang, size.skipped),
                    ),
                )
            broadcast_id = await store.create_broadcast(
                conn,
                text=draft.text,
                audience=draft.audience,
                size=size.reach,
                created_by=audit.actor(caller),
                origin_chat=audit.chat_address(caller),
            )
            await audit.record(
                conn,
                caller,
                action="broadcast.previewed",
                detail={"broadcast": broadcast_id, "reach": size.reach, "text": draft.text},
            )
        text = "\n\n".join(
            [
                tn(
                    lang,
                    "admin.broadcast.preview",
                    size.reach,
                    skipped=skipped_text(lang, size.skipped),
                ),
                draft.text,
                t(
                    lang,
                    "admin.broadcast.audience",
                    audience=describe_audience(draft.audience, lang),
                ),
            ]
        )
        buttons = (
            (
                Button(t(lang, "admin.broadcast.send"), f"{SEND}{broadcast_id}"),
                Button(t(lang, "admin.broadcast.cancel"), f"{CANCEL}{broadcast_id}"),
            ),
        )
        return Reply(lang, text, buttons=buttons)

    async def press(self, caller: Caller, *, action: str, lang: str) -> Reply:
        """A press of Send (``bc:send:ID``) or Cancel (``bc:cancel:ID``) under a preview."""
        try:
            broadcast_id = int(action.rsplit(":", 1)[1])
        except ValueError:
            return Reply(lang, t(lang, "admin.broadcast.unknown"))
        if action.startswith(SEND):
            return await self.confirm(caller, broadcast_id=broadcast_id, lang=lang)
        return await self.cancel(caller, broadcast_id=broadcast_id, lang=lang)

    async def confirm(self, caller: Caller, *, broadcast_id: int, lang: str) -> Reply:
        """Queue the broadcast's rows (once: a second Send says it is no longer pending)."""
        async with self._engine.begin() as conn:
            broadcast = await self._decidable(conn, caller, broadcast_id)
            if broadcast is None:
                return Reply(lang, t(lang, "admin.broadcast.unknown"))
            queued = await store.confirm_broadcast(conn, broadcast_id)
            await audit.record(
                conn,
                caller,
                action="broadcast.confirmed" if queued is not None else "broadcast.repeated",
                detail={"broadcast": broadcast_id, "queued": queued},
            )
        if queued is None:
            return _not_pending(lang, broadcast)
        return Reply(lang, tn(lang, "admin.broadcast.queued", queued, id=broadcast_id))

    async def cancel(self, caller: Caller, *, broadcast_id: int, lang: str) -> Reply:
        """Drop a broadcast still pending; it is never sent."""
        async with self._engine.begin() as conn:
            broadcast = await self._decidable(conn, caller, broadcast_id)
            if broadcast is None:
                return Reply(lang, t(lang, "admin.broadcast.unknown"))
            cancelled = await store.cancel_broadcast(conn, broadcast_id)
            await audit.record(
                conn,
                caller,
                action="broadcast.cancelled",
                detail={"broadcast": broadcast_id, "changed": cancelled},
            )
        if not cancelled:
            return _not_pending(lang, broadcast)
        return Reply(lang, t(lang, "admin.broadcast.cancelled", id=broadcast_id))

    async def _decidable(
        self, conn: AsyncConnection, caller: Caller, broadcast_id: int
    ) -> store.Broadcast | None:
        """The broadcast, if there is one ``caller`` may send or cancel: a workspace's
        installer decides only on the broadcasts they previewed."""
        broadcast = await store.get_broadcast(conn, broadcast_id)
        if broadcast is None:
            return None
        everyone = self._admins.workspace_only(caller) is None
        if everyone or broadcast.created_by == audit.actor(caller):
            return broadcast
        return None

    async def row_done(self, broadcast_id: int) -> None:
        """Called by the delivery engine when a row of the broadcast was completed (sent or
        failed for good) and this process holds no more of its rows; once every row is
        done, the admin who confirmed it gets a report in that chat's language (once: the
        store marks the broadcast done in the same transaction)."""
        async with self._engine.begin() as conn:
            final = await store.finish_if_done(conn, broadcast_id)
            if final is None:
                return
            broadcast = await store.get_broadcast(conn, broadcast_id)
            if broadcast is None or not broadcast.origin_chat:
                return
            platform, _, chat_id = broadcast.origin_chat.partition(":")
            record = await chat_store.get(conn, platform=Platform(platform), chat_id=chat_id)
            if record is None:
                return
            lang = record.chat.lang
            skipped = (await store.audience_size(conn, broadcast.audience)).skipped
            lines = report_lines(lang, final, skipped=skipped)
            await queueing.enqueue(
                conn,
                [
                    queueing.row_values(
                        chat_pk=record.pk,
                        platform=platform,
                        kind="notice",
                        payload=payloads.Notice(text="\n".join(lines)),
                        now=utcnow(),
                        priority=20,
                    )
                ],
            )


@part
def broadcasts(needs: Needs) -> Broadcasts:
    """The broadcast part, as the admin module builds it."""
    return Broadcasts(engine=needs.engine, admins=needs.admins)


def _not_pending(lang: str, broadcast: store.Broadcast) -> Reply:
    """The reply to a decision on a broadcast already sent or cancelled."""
    return Reply(
        lang, t(lang, "admin.broadcast.not_pending", id=broadcast.id, status=broadcast.status)
    )


def report_lines(lang: str, final: store.Progress, *, skipped: int) -> list[str]:
    """The report of a finished broadcast to the admin who sent it: sent, failed and
    skipped, the messages held apart (sent twice with no answer, they may have arrived),
    then the commonest reasons of failure."""
    lines = [
        t(
            lang,
            "admin.broadcast.report",
            id=final.broadcast_id,
            sent=final.sent,
            failed=final.failed,
            skipped=skipped,
        )
    ]
    if final.held:
        lines.append(tn(lang, "admin.broadcast.report_held", final.held))
    if final.failures:
        reasons = ", ".join(f"{reason} ({n})" for reason, n in final.failures)
        lines.append(t(lang, "admin.broadcast.report_failures", reasons=reasons))
    return lines
