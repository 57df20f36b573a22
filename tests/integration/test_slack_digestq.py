"""Digest quality through the Slack adapter: Bolt and slack-sdk unchanged, over real HTTP
against FakeSlack, on each backend; 👍/👎 buttons in each page's blocks and their answers."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import render
from bot.channels.slack.client import ACTION_ID_RE
from bot.channels.slack.sender import SlackSender
from bot.commands import Caller, CommandCore, Defaults
from bot.delivery.engine import Delivery
from bot.i18n import t
from bot.models import ChatKind, ChatSettings, Digest, DigestItem, Filter, Platform
from bot.render import votes
from bot.rules.digest import as_planned
from bot.store import chats as chat_store
from bot.store import feedback as feedback_store
from bot.store.schema import pages
from tests.fakes.slack_api import FakeSlack, block_actions_body, block_actions_payload
from tests.integration.test_digest_quality import page_text
from tests.integration.test_planner import started
from tests.integration.test_poll import write
from tests.integration.test_slack import (
    CHANNEL,
    USER,
    Bot,
    P,
    block_texts,
    bot,
    buttons,
    make_page,
    record_of,
    rl_digest,
    seed_pages,
    sender,
    sl,
)

__all__ = ["bot", "sender", "sl"]  # fixtures of the Slack adapter's tests


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_digest_quality_commands_answer_in_the_chats_language(
    bot: Bot, engine: AsyncEngine, lang: str
) -> None:
    await seed_pages(engine)
    if lang == "ko":
        await bot.command("lang ko")

    async def says(text: str) -> str:
        answer = await bot.command(text)
        assert answer.body["response_type"] == "ephemeral"
        return answer.text

    friday = t(lang, "digestq.weekday.fri")
    weekly = t(lang, "digestq.mode.weekly", day=friday, time="09:00", timezone="UTC")
    assert weekly in await says("mode weekly fri")
    assert t(lang, "mode.usage", value="fortnightly", p=P) in await says("mode fortnightly")
    assert t(lang, "digestq.limit.set", count=10, p=P) in await says("limit 10")
    assert t(lang, "digestq.limit.usage", p=P, most=50) in await says("limit 0")
    quiet = t(lang, "digestq.quiet.set", quiet="23:00-06:30", timezone="UTC")
    assert quiet in await says("quiet 23:00-06:30")
    assert t(lang, "digestq.quiet.usage", p=P) in await says("quiet 23:00-23:00")
    settings = await says("settings")
    assert t(lang, "digestq.settings.weekly", day=friday) in settings
    assert t(lang, "digestq.settings.quiet", quiet="23:00-06:30") in settings
    assert t(lang, "digestq.feedback.none") in await says("feedback")
    assert t(lang, "digestq.feedback.usage", p=P) in await says("feedback please")
    assert (await says("why https://wiki.example.org/papers/2026/p1")).startswith("“")
    assert t(lang, "why.unknown", page="nothing-here", p=P) in await says("why nothing-here")

    ask = await bot.command("feedback reset")
    offered = buttons(ask)
    assert set(offered) == {"fbreset:yes", "fbreset:no"}
    done = await bot.press(offered["fbreset:yes"])
    assert done["replace_original"] is True
    # No vote was cast: a confirmation says there was nothing to forget.
    assert done["text"] == t(lang, "digestq.feedback.reset_empty")
    record = await record_of(engine, CHANNEL)
    assert record is not None and record.chat.limit == 10 and record.chat.weekday == 4


async def test_latest_pages_carry_vote_buttons_answered_to_the_presser(
    bot: Bot, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    await bot.command("subscribe rl")
    latest = await bot.command("latest")
    offered = buttons(latest)
    ups = [value for value in offered if value.startswith("vote:+:")]
    assert len(ups) == 2 and all(ACTION_ID_RE.match(b["action_id"]) for b in offered.values())
    assert [offered[v]["text"]["text"] for v in ups] == ["1 👍", "2 👍"]

    first = await bot.press(offered[ups[0]], user="U1")
    assert first["text"] == "Noted: pages like this will rank higher in your digests."
    assert first.get("replace_original") is not True  # the pages stay where they are
    await bot.press(offered[ups[0]], user="U2")
    down = ups[0].replace("vote:+:", "vote:-:")
    again = await bot.press(offered[down], user="U2")
    assert again["text"] == "Noted: pages like this will rank lower in your digests."
    record = await record_of(engine, CHANNEL)
    assert record is not None
    async with engine.connect() as conn:
        weights = await feedback_store.weights_of(conn, chat_pk=record.pk)
    assert weights == {}  # U1 up, U2 down on the same page: they cancel out
    shown = await bot.command("feedback")
    assert t("en", "digestq.feedback.cancelled") in shown.text


async def test_a_forged_vote_value_is_answered_and_stores_nothing(
    bot: Bot, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    forged: dict[str, Any] = {
        "action_id": "trend:vote-1-up",
        "value": "vote:+:99999999",
        "text": {"type": "plain_text", "text": "1 👍"},
    }
    answer = await bot.press(forged)
    assert answer["text"] == "That button no longer works."
    forged["value"] = "vote:+:1; DROP TABLE votes"
    answer = await bot.press(forged)
    assert answer["text"] == "That button no longer works."


def ranked_digest_part() -> Any:
    pages = [make_page(i, ("rl",)) for i in range(3)]
    built = rl_digest(pages)
    ids = {page.key: 100 + i for i, page in enumerate(pages)}
    digest = dataclasses.replace(
        as_planned(
            built,
            page_ids=[ids[p.key] for p in reversed(pages)],
            pages={ids[p.key]: p for p in pages},
            ranked=True,
        ),
        more=7,
    )
    [part] = render.digest_messages(Platform.SLACK, digest)
    return part


async def test_a_ranked_digest_posts_vote_buttons_in_each_pages_blocks(
    sender: SlackSender, sl: FakeSlack
) -> None:
    await sender.send("C1", ranked_digest_part(), thread=None)
    [posted] = sl.messages_to("C1")
    # Each page a container, its 👍/👎 Slack's feedback_buttons in the block after it.
    feedback = [e for b in posted["blocks"] if b["type"] == "context_actions"
                for e in b["elements"]]  # fmt: skip
    assert [e["type"] for e in feedback] == ["feedback_buttons"] * 3
    assert [[e["positive_button"]["value"], e["negative_button"]["value"]] for e in feedback] == [
        [votes.action(n, up=True), votes.action(n, up=False)] for n in (102, 101, 100)
    ]
    action_ids = [e["action_id"] for e in feedback]
    assert len(set(action_ids)) == len(action_ids) and all(map(ACTION_ID_RE.match, action_ids))
    containers = [b for b in posted["blocks"] if b["type"] == "container"]
    assert [c["title"]["text"][:3] for c in containers] == ["1. ", "2. ", "3. "]
    texts = block_texts(posted["blocks"])
    assert texts[-1] == "…and 7 more: latest"
    assert block_texts(containers[0]["child_blocks"])[0].startswith(
        "*<https://wiki.example.org/p2|"
    )
    assert all(call.ok for call in sl.calls("chat.postMessage"))


async def test_where_containers_are_refused_the_digest_posts_todays_vote_buttons(
    sender: SlackSender, sl: FakeSlack
) -> None:
    sl.refuse_blocks("container")
    await sender.send("C1", ranked_digest_part(), thread=None)
    [posted] = sl.messages_to("C1")
    actions = [b for b in posted["blocks"] if b["type"] == "actions"]
    assert [[e["value"] for e in b["elements"]] for b in actions] == [
        [votes.action(n, up=True), votes.action(n, up=False)] for n in (102, 101, 100)
    ]
    action_ids = [e["action_id"] for b in actions for e in b["elements"]]
    assert len(set(action_ids)) == len(action_ids) and all(map(ACTION_ID_RE.match, action_ids))
    texts = block_texts(posted["blocks"])
    assert texts[-1] == "…and 7 more: latest"
    assert any(text.startswith("1. *<https://wiki.example.org/p2|") for text in texts)
    assert [c.error for c in sl.calls("chat.postMessage")] == ["invalid_blocks", None]


async def test_a_digests_feedback_buttons_vote_once_per_user_and_a_second_press_undoes(
    bot: Bot, sender: SlackSender, sl: FakeSlack, engine: AsyncEngine
) -> None:
    await seed_pages(engine)
    await bot.command("subscribe rl")
    ids = [int(v.rsplit(":", 1)[1]) for v in buttons(await bot.command("latest")) if v[5] == "+"]
    items = tuple(
        DigestItem(page=make_page(i, ("rl",)), matched=("rl",), page_id=page_id)
        for i, page_id in enumerate(ids)
    )
    digest = Digest(lang="en", date=dt.date(2026, 12, 3), items=items)
    [part] = render.digest_messages(Platform.SLACK, digest)
    await sender.send(CHANNEL, part, thread=None)
    [posted] = sl.messages_to(CHANNEL)
    [first, _] = [b["elements"][0] for b in posted["blocks"] if b["type"] == "context_actions"]

    async def press(side: str, user: str) -> dict[str, Any]:
        # As Slack sends it: the element's action_id, the pressed button's text and value.
        name = bot.response_name()
        payload = block_actions_payload(
            first["action_id"],
            value=first[side]["value"],
            user_id=user,
            channel_id=CHANNEL,
            response_url=sl.response_url(name),
            button_text=first[side]["text"]["text"],
            message=posted,
            element="feedback_buttons",
        )
        assert await bot.post(block_actions_body(payload)) == (200, "")
        return (await sl.wait_for_response(name))[-1]

    async def weights() -> dict[str, float]:
        record = await record_of(engine, CHANNEL)
        assert record is not None
        async with engine.connect() as conn:
            return dict(await feedback_store.weights_of(conn, chat_pk=record.pk))

    up = await press("positive_button", "U1")
    assert up["text"] == t("en", "digestq.vote.up")
    assert up.get("replace_original") is not True  # the digest stays as it was
    assert (await weights()).get("rl", 0) > 0
    again = await press("positive_button", "U1")  # the same vote again: taken back
    assert again["text"] == t("en", "digestq.vote.undone")
    assert await weights() == {}
    down = await press("negative_button", "U2")
    assert down["text"] == t("en", "digestq.vote.down")
    assert (await weights()).get("rl", 0) < 0
    assert all(call.ok for call in sl.calls("chat.postMessage"))


def _entry_title(block: dict[str, Any]) -> str | None:
    """The title of a page's container (``1. title``) or of its section where containers
    are refused (``1. *<url|title>*``), or None for another block."""
    if block.get("type") == "container":
        numbered = re.match(r"\d+\. (.+)", block["title"]["text"])
        return numbered.group(1) if numbered else None
    found = re.match(r"\d+\. \*(?:<[^|>]*\|)?([^*>]+)>?\*", block.get("text", {}).get("text", ""))
    return found.group(1) if found else None


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_a_ranked_threaded_digests_top_3_follow_its_own_order(
    engine: AsyncEngine, tmp_path: Path, sender: SlackSender, sl: FakeSlack, lang: str
) -> None:
    """Planned from the chat's votes and delivered to Slack, a digest long enough for a
    thread: the summary's "Top 3" are the first three pages of the thread, in its order,
    which is the ranking's (liked tags first), not the usual newest-first order."""
    world = await started(engine, tmp_path)
    async with engine.begin() as conn:
        await chat_store.ensure(
            conn,
            defaults=ChatSettings(
                platform=Platform.SLACK,
                chat_id=CHANNEL,
                kind=ChatKind.GROUP,
                lang=lang,
                filter=Filter(everything=True),
            ),
        )
    core = CommandCore(engine=engine, defaults=Defaults())
    voter = Caller(platform=Platform.SLACK, chat_id=CHANNEL, user_id=USER)
    await world.publish("v/liked", tags="[vision]")
    await world.publish("v/disliked", tags="[robotics]")
    assert await world.plan() == 1  # the welcome digest: sent first, out of the way
    await Delivery(engine=engine, senders={Platform.SLACK: sender}).drain()
    for key, up in (("v/liked", True), ("v/disliked", False)):  # votes on what it showed
        async with engine.connect() as conn:
            page_id = (await conn.execute(select(pages.c.id).where(pages.c.key == key))).scalar()
        assert page_id is not None
        await core.handle_action(voter, votes.action(page_id, up=up))

    # Six new pages; newest first they are n1 n2 r1 v1 v2 r2, the ranking puts the liked
    # tag first and the disliked one last.
    for title, tags, day in (
        ("n1", "[nlp]", 6),
        ("n2", "[nlp]", 5),
        ("r1", "[robotics]", 4),
        ("v1", "[vision]", 3),
        ("v2", "[vision]", 2),
        ("r2", "[robotics]", 1),
    ):
        write(world.root, f"q/{title}.md", page_text(title, tags, f"2026-11-0{day}"))
    await world.poller.poll()
    assert await world.plan() == 1
    posted_before = len(sl.messages_to(CHANNEL))
    await Delivery(engine=engine, senders={Platform.SLACK: sender}).drain()

    [summary, *replies] = sl.messages_to(CHANNEL)[posted_before:]
    assert "thread_ts" not in summary and replies
    assert all(reply["thread_ts"] == summary["ts"] for reply in replies)
    thread = [
        title
        for reply in replies
        for block in reply["blocks"]
        if (title := _entry_title(block)) is not None
    ]
    assert thread == ["v1", "v2", "n1", "n2", "r1", "r2"]
    [top] = [
        block["text"]["text"]
        for block in summary["blocks"]
        if block["type"] == "section"
        and block["text"]["text"].startswith(t(lang, "render.top", count=3))
    ]
    shown = re.findall(r"• \*(?:<[^|>]*\|)?([^*>]+)>?\*", top)
    assert shown == thread[:3]
    # The fallback text of the summary (notifications, screen readers) in the same order.
    assert [line[2:] for line in summary["text"].splitlines()[1:]] == thread[:3]
