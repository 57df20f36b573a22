"""The one-shot commands that queue and send, from this process: ``trendbot poll``,
``trendbot digest --now`` and ``trendbot broadcast``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from bot.cli import EXIT_CONFIG, EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from bot.settings import Settings


async def poll(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_app

    async with open_app(settings) as app:
        summary = await app.poller.poll(backfill_days=args.backfill, log_summary=False)
    for outcome in summary.outcomes:
        if outcome.error:
            print(f"source failed: {outcome.shown}: {outcome.error}", file=sys.stderr)
    print(summary.line(), flush=True)
    return EXIT_FAILED if summary.all_failed else EXIT_OK


async def digest(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_app
    from bot.service import send_once
    from bot.store import chats as chat_store
    from bot.store import outbox
    from bot.store import standing as progress
    from bot.store.engine import reader
    from bot.util import settle_heap, utcnow

    async with open_app(settings) as app:
        settle_heap()
        chat_pks: list[int] | None = None
        if args.chat is not None:
            platform, chat_id = args.chat
            async with reader(app.engine).connect() as conn:
                record = await chat_store.get(conn, platform=platform, chat_id=chat_id)
            if record is None:
                print(f"no such chat: {platform.value}:{chat_id}", file=sys.stderr)
                return EXIT_FAILED
            chat_pks = [record.pk]
        async with app.engine.begin() as conn:
            retried = await outbox.retry_failed(conn, chat_pks=chat_pks)
        planned = await app.planner.plan_now(chat_pks=chat_pks)
        async with reader(app.engine).connect() as conn:
            row_ids = await progress.due_ids(conn, now=utcnow(), chat_pks=chat_pks)
        handover = await send_once(app, say=_say, row_ids=row_ids, chat_pks=chat_pks)
        async with reader(app.engine).connect() as conn:
            done = await progress.standing(conn, row_ids=row_ids, now=utcnow())
            left, _ = await outbox.pending(conn, chat_pks=chat_pks)
    print(
        digest_summary(
            planned=planned,
            retried=retried,
            took=len(row_ids),
            done=done,
            left=left,
            sent_here=handover.sent_here,
            run_sending=handover.run_sending,
        )
    )
    return EXIT_OK


# Messages sent twice with no answer (bot/store/outbox.py): neither sent nor failed, and
# never retried, so a summary names them apart.
HELD = "held (no answer twice: may have arrived, not sent again)"


def digest_summary(
    *,
    planned: int,
    retried: int,
    took: int,
    done: Any,
    left: int,
    sent_here: int,
    run_sending: bool,
) -> str:
    """What ``digest --now`` planned and what became of it, in numbers that add up.

    ``took``: the messages the command set out to send (those it planned and retried, and
    any others already due); ``done``: where they stand now (a ``bot.store.standing.Standing``);
    ``left``: every message still queued; ``sent_here``: the messages this process sent
    itself (those sent besides, a running ``trendbot run`` sent); ``run_sending``: a run
    was sending when the command stopped waiting, so what is still to send is handed over
    to it. Sent, failed, handed over (or still to send) and left for retry make ``took``;
    messages queued for later that the command did not take are counted apart, never as
    its own. Held messages are counted apart, when there are any.
    """
    earlier = max(0, took - planned - retried)
    parts = [f"{planned} planned", f"{retried} retried"]
    if earlier:
        parts.append(f"{earlier} already due")
    parts.append(sent_clause(done.sent, sent_here=sent_here))
    parts.append(f"{done.failed} failed")
    if done.held:
        parts.append(f"{done.held} {HELD}")
    if done.due:
        where = "handed over to the running trendbot run" if run_sending else "still to send"
        parts.append(f"{done.due} {where}")
    parts.append(f"{done.later} left queued for retry")
    text = ", ".join(parts)
    others = max(0, left - done.due - done.later)
    if others:
        text += f" ({others} other messages queued for later)"
    return text


def sent_clause(sent: int, *, sent_here: int) -> str:
    """``N sent``, and how many of them a running ``trendbot run`` sent: a one-shot
    command's summary counts what its own process did."""
    by_run = sent - min(sent_here, sent)
    return f"{sent} sent" + (f" ({by_run} by the trendbot run)" if by_run else "")


async def broadcast(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_app
    from bot.commands.broadcast import MAX_BROADCAST_CHARS, skipped_text
    from bot.i18n import clean, t, tn
    from bot.service import send_once
    from bot.store import admin as admin_store
    from bot.store.admin import Audience
    from bot.store.engine import reader
    from bot.tags import normalize_tag
    from bot.util import settle_heap

    text = clean(args.text).strip()  # as in chat: no bidi controls or invisible characters
    if not text or len(text) > MAX_BROADCAST_CHARS:
        print(
            f"trendbot broadcast: --text must be 1-{MAX_BROADCAST_CHARS} characters",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    normalized = [normalize_tag(tag) for tag in args.tag]
    tags = tuple(tag for tag in normalized if tag is not None)
    if len(tags) != len(normalized):
        print("trendbot broadcast: --tag needs a tag such as rl", file=sys.stderr)
        return EXIT_CONFIG
    audience = Audience(tags=tags, platform=args.platform, lang=args.lang)
    async with open_app(settings) as app:
        settle_heap()
        async with reader(app.engine).connect() as conn:
            size = await admin_store.audience_size(conn, audience)
        skipped = skipped_text("en", size.skipped)
        if size.reach == 0:
            print(t("en", "cli.broadcast.no_audience", skipped=skipped), file=sys.stderr)
            return EXIT_FAILED
        print(tn("en", "cli.broadcast.reach", size.reach, skipped=skipped))
        if not args.yes:
            answer = await asyncio.to_thread(_ask, "Send it? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("Cancelled; nothing was sent.")
                return EXIT_FAILED
        async with app.engine.begin() as conn:
            broadcast_id, queued = await admin_store.broadcast_now(
                conn, text=text, audience=audience, created_by="shell"
            )
            await admin_store.audit(
                conn,
                actor="shell",
                chat=None,
                action="broadcast.confirmed",
                allowed=True,
                detail={"broadcast": broadcast_id, "queued": queued, "text": text},
            )
        handover = await send_once(app, say=_say, broadcast=broadcast_id)
        async with reader(app.engine).connect() as conn:
            state = await admin_store.progress(conn, broadcast_id)
    sent = sent_clause(state.sent, sent_here=handover.sent_here)
    left = (
        "handed over to the running trendbot run"
        if handover.run_sending
        else "left queued for retry"
    )
    held = f"{state.held} {HELD}, " if state.held else ""
    print(
        f"Broadcast #{broadcast_id}: {queued} queued, {sent}, {state.failed} failed, "
        f"{held}{state.pending} {left}"
    )
    return EXIT_OK


def _say(line: str) -> None:
    print(line, flush=True)


def _ask(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        return ""
