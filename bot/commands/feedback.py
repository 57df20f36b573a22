"""What the votes taught and why a page came or not: ``feedback``, ``why``, the 👍/👎
buttons."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.commands.base import (
    Caller,
    Context,
    Ports,
    answer,
    chat_record,
    may_manage,
    refusal_key,
)
from bot.commands.registry import EVERYONE, action, command
from bot.i18n import t
from bot.matching import why
from bot.models import (
    Button,
    Chart,
    ChartPanel,
    Reply,
    Toast,
)
from bot.render import votes
from bot.rules import ranking
from bot.store import chats as chat_store
from bot.store import feedback as feedback_store

FEEDBACK_TOP = 5  # liked and disliked tags `feedback` shows, each
FEEDBACK_RESET = "fbreset:"
FEEDBACK_SHOWN_MIN = 0.1  # `feedback` shows weights to one decimal: smaller ones read as 0


@command("feedback", order=170, audience=EVERYONE)
async def feedback_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    lang = record.chat.lang
    word = args.strip().lower()
    if word == "reset":
        buttons = (
            Button(t(lang, "digestq.feedback.reset_yes"), FEEDBACK_RESET + "yes"),
            Button(t(lang, "digestq.feedback.reset_no"), FEEDBACK_RESET + "no"),
        )
        return Reply(lang, t(lang, "digestq.feedback.reset_ask"), buttons=(buttons,))
    if word:
        return Reply(lang, t(lang, "digestq.feedback.usage", p=ctx.prefix))
    found = await feedback_store.weights_of(ctx.conn, chat_pk=record.pk)
    # Only weights that show as non-zero: votes that cancel out leave "-0.0" otherwise.
    shown = {tag: w for tag, w in found.items() if round(abs(w), 1) >= FEEDBACK_SHOWN_MIN}
    liked, disliked = ranking.top_tags(shown, count=FEEDBACK_TOP)
    lines = [t(lang, "digestq.feedback.header")]
    if not liked and not disliked:
        if await feedback_store.count(ctx.conn, chat_pk=record.pk):
            lines.append(t(lang, "digestq.feedback.cancelled"))
        else:
            lines.append(t(lang, "digestq.feedback.none"))
    if liked:
        lines.append(t(lang, "digestq.feedback.liked", tags=_weights_text(liked)))
    if disliked:
        lines.append(t(lang, "digestq.feedback.disliked", tags=_weights_text(disliked)))
    lines.append(t(lang, "digestq.feedback.rule", p=ctx.prefix))
    return Reply(lang, "\n".join(lines), chart=feedback_chart(lang, liked, disliked))


@action(FEEDBACK_RESET)
async def press_feedback_reset(ports: Ports, caller: Caller, action: str, *, prefix: str) -> Reply:
    """The answer to ``feedback reset``'s question: the chat's votes forgotten, or kept."""
    choice = action.removeprefix(FEEDBACK_RESET)
    if choice == "yes" and not await may_manage(caller):
        return await ports.in_chat(caller, answer(refusal_key(caller)), write=False)

    async def body(conn: AsyncConnection, record: chat_store.ChatRecord) -> Reply:
        lang = record.chat.lang
        if choice != "yes":
            return Reply(lang, t(lang, "digestq.feedback.reset_kept"))
        gone = await feedback_store.reset(conn, chat_pk=record.pk)
        if not gone:  # a second press, or a chat without votes
            return Reply(lang, t(lang, "digestq.feedback.reset_empty"))
        return Reply(lang, t(lang, "digestq.feedback.reset_done", count=gone, p=prefix))

    return await ports.in_chat(caller, body, write=choice == "yes")


@action(votes.VOTE)
async def press_vote(ports: Ports, caller: Caller, action: str, *, prefix: str) -> Toast:
    """A 👍 or 👎 under a page: the presser's vote counted, changed or taken back."""
    parsed = votes.parse(action)
    if parsed is None or not caller.user_id:
        record = await ports.in_chat(caller, chat_record, write=False)
        return Toast(record.chat.lang, t(record.chat.lang, "digestq.vote.invalid"))
    page_id, up = parsed

    async def body(conn: AsyncConnection, record: chat_store.ChatRecord) -> Toast:
        lang = record.chat.lang
        now = await feedback_store.press(
            conn,
            chat_pk=record.pk,
            page_id=page_id,
            user_id=caller.user_id,
            value=ranking.UP if up else ranking.DOWN,
        )
        if now is None:  # a page the chat never received, or no page at all: one answer
            return Toast(lang, t(lang, "digestq.vote.invalid"))
        key = {ranking.UP: "up", ranking.DOWN: "down"}.get(now, "undone")
        return Toast(lang, t(lang, f"digestq.vote.{key}"))

    return await ports.in_chat(caller, body, write=True)


@command("why", order=180, audience=EVERYONE)
async def why_command(record: chat_store.ChatRecord, args: str, ctx: Context) -> Reply:
    return await why.answer(ctx.conn, record, args, prefix=ctx.prefix)


def _weights_text(found: Sequence[tuple[str, float]]) -> str:
    return ", ".join(f"{tag} {weight:+.1f}" for tag, weight in found)


async def votes_chart(conn: AsyncConnection, *, chat_pk: int, lang: str) -> Chart | None:
    """The chart ``feedback`` draws of the chat's votes; None while they taught nothing."""
    found = await feedback_store.weights_of(conn, chat_pk=chat_pk)
    shown = {tag: w for tag, w in found.items() if round(abs(w), 1) >= FEEDBACK_SHOWN_MIN}
    return feedback_chart(lang, *ranking.top_tags(shown, count=FEEDBACK_TOP))


def feedback_chart(
    lang: str, liked: Sequence[tuple[str, float]], disliked: Sequence[tuple[str, float]]
) -> Chart | None:
    """The tags' weights as bars, the liked ones first; None when there is none."""
    weights = [*liked, *disliked]
    if not weights:
        return None
    return Chart(
        alt=t(lang, "charts.feedback.alt"),
        panels=(
            ChartPanel(
                kind="bars",
                title=t(lang, "charts.feedback.title"),
                fallback_title=t("en", "charts.feedback.title"),
                labels=tuple(tag for tag, _ in weights),
                values=tuple(round(w, 1) for _, w in weights),
            ),
        ),
    )
