"""Digest quality on each backend, through the command core and the planner: votes and
their ranking, limits, weekly mode, quiet hours on a controlled clock, and ``why``."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import Caller, CommandCore, Defaults, describe_next
from bot.models import ChatKind, ChatState, Mode, Platform, QuietHours, Reply, Toast
from bot.render import votes
from bot.store import chats as chat_store
from bot.store import feedback as feedback_store
from bot.store import outbox
from bot.store.chats import ChatRecord
from bot.store.schema import outbox as outbox_table
from bot.store.schema import pages
from tests.integration.test_planner import World, started
from tests.integration.test_poll import write

GROUP = "-100777"


def caller(chat_id: str, *, user: str = "7", group: bool = False, admin: bool = True) -> Caller:
    async def can_manage() -> bool:
        return admin

    return Caller(
        platform=Platform.TELEGRAM,
        chat_id=chat_id,
        user_id=user,
        chat_kind=ChatKind.GROUP if group else ChatKind.PRIVATE,
        can_manage=can_manage if group else None,
    )


class Bot:
    """The command core over a :class:`World`: commands and presses as a chat sends them."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.core = CommandCore(engine=world.engine, defaults=Defaults(), digests=world.planner)

    async def say(self, chat_id: str, text: str, **who: object) -> Reply:
        return await self.core.handle(caller(chat_id, **who), text)  # type: ignore[arg-type]

    async def press(self, chat_id: str, action: str, **who: object) -> Reply | Toast | None:
        return await self.core.handle_action(caller(chat_id, **who), action)  # type: ignore[arg-type]

    async def record(self, chat_id: str) -> ChatRecord:
        async with self.world.engine.connect() as conn:
            found = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=chat_id)
        assert found is not None
        return found

    async def page_id(self, key: str) -> int:
        async with self.world.engine.connect() as conn:
            found = (await conn.execute(select(pages.c.id).where(pages.c.key == key))).scalar()
        assert found is not None
        return int(found)

    async def weights(self, chat_id: str) -> dict[str, float]:
        record = await self.record(chat_id)
        async with self.world.engine.connect() as conn:
            return await feedback_store.weights_of(conn, chat_pk=record.pk)

    async def outbox_rows(self, chat_id: str) -> list[tuple[int, str, dict[str, object]]]:
        record = await self.record(chat_id)
        async with self.world.engine.connect() as conn:
            rows = await conn.execute(
                select(outbox_table.c.id, outbox_table.c.kind, outbox_table.c.payload)
                .where(outbox_table.c.chat_pk == record.pk)
                .order_by(outbox_table.c.id)
            )
            return [(i, k, json.loads(p)) for i, k, p in rows]


@pytest.fixture
async def bot(engine: AsyncEngine, tmp_path: Path) -> Bot:
    return Bot(await started(engine, tmp_path))


async def unchanged(bot: Bot, chat_id: str, body: Callable[[], Awaitable[Reply]]) -> Reply:
    """Run ``body`` and check that the chat is as it was."""
    before = await bot.record(chat_id)
    reply = await body()
    after = await bot.record(chat_id)
    assert after.chat == before.chat and after.next_digest_at == before.next_digest_at
    return reply


# ------------------------------------------------------------------ weekly mode


async def test_mode_weekly_sets_the_day_and_settings_show_it(bot: Bot) -> None:
    await bot.say("1", "/subscribe rl")  # a chat that follows nothing gets no digest
    reply = await bot.say("1", "/mode weekly fri")
    assert reply.text == "You will get one digest a week: Friday at 09:00 (UTC)."
    record = await bot.record("1")
    assert record.chat.mode == Mode.WEEKLY and record.chat.weekday == 4
    assert record.next_digest_at is not None
    assert record.next_digest_at.weekday() == 4 and record.next_digest_at.time() == dt.time(9)
    settings = (await bot.say("1", "/settings")).text
    assert "Mode: weekly digest" in settings and "Weekly digest day: Friday" in settings
    # The next digest is the Friday one, said as settings says any next digest.
    due = record.next_digest_at.replace(tzinfo=dt.UTC)
    day_before = due - dt.timedelta(days=1)
    found = describe_next(record.chat, next_at=record.next_digest_at, now=day_before)
    assert found is not None
    when, wait = found
    assert when == "tomorrow at 09:00" and wait == "1 d"
    assert settings.count("Next digest: ") == 1 and " 09:00 (UTC), in " in settings

    await bot.say("1", "/lang ko")
    reply = await bot.say("1", "/mode weekly")
    assert reply.text == "매주 월요일 09:00(UTC)에 요약을 보내 드립니다."
    assert (await bot.record("1")).chat.weekday == 0
    settings = (await bot.say("1", "/settings")).text
    assert "방식: 주간 요약" in settings and "주간 요약 요일: 월요일" in settings


@pytest.mark.parametrize(
    "text", ["/mode", "/mode weekly someday", "/mode weekly fri sat", "/mode hourly", "/mode 🙂"]
)
async def test_a_bad_mode_gets_the_usage_and_changes_nothing(bot: Bot, text: str) -> None:
    await bot.say("1", "/mode weekly wed")
    reply = await unchanged(bot, "1", lambda: bot.say("1", text))
    assert "mode weekly" in reply.text and ("mon" in reply.text)
    await bot.say("1", "/lang ko")
    reply = await unchanged(bot, "1", lambda: bot.say("1", text))
    assert "요일" in reply.text or "중 하나를 쓰세요" in reply.text


async def test_a_weekly_digest_covers_the_week_at_its_time(bot: Bot) -> None:
    world = bot.world
    await bot.say("1", "/subscribe rl")
    await bot.say("1", "/mode weekly mon")
    due = (await bot.record("1")).next_digest_at
    assert due is not None
    await world.publish("p/a", tags="[rl]")
    await world.publish("p/b", tags="[rl]")
    assert await world.planner.plan_due(now=due - dt.timedelta(minutes=1)) == 0
    assert await world.planner.plan_due(now=due) == 1
    rows = await bot.outbox_rows("1")
    assert [kind for _, kind, _ in rows] == ["digest"]
    assert len(rows[0][2]["pages"]) == 2  # type: ignore[arg-type]
    assert (await bot.record("1")).next_digest_at == due + dt.timedelta(days=7)


# ------------------------------------------------------------------ quiet hours


async def test_quiet_hours_are_set_shown_and_turned_off(bot: Bot) -> None:
    await bot.say("1", "/timezone Asia/Seoul")
    reply = await bot.say("1", "/quiet 22:00-07:00")
    assert reply.text.startswith("Quiet hours: 22:00-07:00 (Asia/Seoul).")
    assert (await bot.record("1")).chat.quiet == QuietHours(dt.time(22), dt.time(7))
    assert "Quiet hours: 22:00-07:00" in (await bot.say("1", "/settings")).text
    reply = await bot.say("1", "/quiet 23:30 – 06:15")  # spaces and an en dash
    assert (await bot.record("1")).chat.quiet == QuietHours(dt.time(23, 30), dt.time(6, 15))
    assert (await bot.say("1", "/quiet off")).text == "Quiet hours are off."
    assert (await bot.record("1")).chat.quiet is None
    assert "Quiet hours: off" in (await bot.say("1", "/settings")).text

    await bot.say("1", "/lang ko")
    reply = await bot.say("1", "/quiet 22:00-07:00")
    assert reply.text.startswith("방해 금지 시간: 22:00-07:00(Asia/Seoul).")
    assert (await bot.say("1", "/quiet off")).text == "방해 금지 시간을 껐습니다."


@pytest.mark.parametrize(
    "args", ["", "22:00", "25:00-07:00", "22:00-07:60", "22:00-22:00", "late", "22-07", "-"]
)
async def test_bad_quiet_hours_get_the_usage_and_change_nothing(bot: Bot, args: str) -> None:
    await bot.say("1", "/quiet 01:00-02:00")
    reply = await unchanged(bot, "1", lambda: bot.say("1", f"/quiet {args}"))
    assert "HH:MM-HH:MM" in reply.text


async def test_instant_pages_in_quiet_hours_are_held_and_sent_as_one_digest(bot: Bot) -> None:
    world = bot.world
    await bot.say("1", "/subscribe rl")
    await bot.say("1", "/mode instant")
    await bot.say("1", "/quiet 22:00-07:00")
    await world.publish("p/a", tags="[rl]")
    await world.publish("p/b", tags="[rl]")
    today = dt.datetime.now(dt.UTC).replace(tzinfo=None).date()
    night = dt.datetime.combine(today, dt.time(23, 0))
    morning = dt.datetime.combine(today + dt.timedelta(days=1), dt.time(7, 0))
    assert await world.planner.plan_due(now=night) == 0
    assert (await bot.record("1")).held_until == morning
    settings = (await bot.say("1", "/settings")).text
    assert "Pages held by the quiet hours go out at 07:00." in settings
    why = (await bot.say("1", "/why p/a")).text
    assert "Held by the quiet hours: it goes out " in why and "07:00 (UTC)" in why
    await world.publish("p/c", tags="[rl]")  # arrives while held: joins them
    assert await world.planner.plan_due(now=morning - dt.timedelta(minutes=1)) == 0
    assert await world.planner.plan_due(now=morning) == 1
    rows = await bot.outbox_rows("1")
    assert [kind for _, kind, _ in rows] == ["digest"]
    assert len(rows[0][2]["pages"]) == 3  # type: ignore[arg-type]
    assert (await bot.record("1")).held_until is None
    # Outside the quiet hours, instant pages go one by one again.
    await world.publish("p/d", tags="[rl]")
    assert await world.planner.plan_due(now=morning + dt.timedelta(hours=1)) == 1
    assert [kind for _, kind, _ in await bot.outbox_rows("1")] == ["digest", "page"]


@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Berlin"])
async def test_a_daily_digest_due_in_quiet_hours_goes_out_when_they_end(
    bot: Bot, zone: str
) -> None:
    world = bot.world
    await bot.say("1", "/subscribe rl")
    await bot.say("1", f"/timezone {zone}")
    await bot.say("1", "/time 23:00")
    await bot.say("1", "/quiet 22:00-07:00")
    due = (await bot.record("1")).next_digest_at
    assert due is not None
    local = due.replace(tzinfo=dt.UTC).astimezone(ZoneInfo(zone))
    assert local.time() == dt.time(7, 0)
    await world.publish("p/a", tags="[rl]")
    assert await world.planner.plan_due(now=due - dt.timedelta(minutes=1)) == 0
    assert await world.planner.plan_due(now=due) == 1
    after = (await bot.record("1")).next_digest_at
    assert after is not None
    assert after.replace(tzinfo=dt.UTC).astimezone(ZoneInfo(zone)).time() == dt.time(7)
    assert dt.timedelta(hours=22) < after - due < dt.timedelta(hours=26)


# ------------------------------------------------------------------ limit


# `limit` alone shows the current value (tests/integration/test_replies.py)
@pytest.mark.parametrize("args", ["0", "51", "-1", "ten", "1.5", "١٠", "10 20", "off please"])
async def test_a_bad_limit_gets_the_usage_and_changes_nothing(bot: Bot, args: str) -> None:
    await bot.say("1", "/limit 3")
    reply = await unchanged(bot, "1", lambda: bot.say("1", f"/limit {args}"))
    assert reply.text == "Give a number from 1 to 50, e.g. /limit 10, or /limit off."
    await bot.say("1", "/lang ko")
    reply = await unchanged(bot, "1", lambda: bot.say("1", f"/limit {args}"))
    assert reply.text == "1부터 50 사이의 숫자를 적어 주세요. 예: /limit 10 또는 /limit off"


async def test_limit_is_set_shown_and_turned_off(bot: Bot) -> None:
    reply = await bot.say("1", "/limit 10")
    assert reply.text.startswith("Pages per digest: at most 10, best ranked first")
    assert (await bot.record("1")).chat.limit == 10
    assert "Pages per digest: at most 10" in (await bot.say("1", "/settings")).text
    assert (await bot.say("1", "/limit OFF")).text.startswith("No limit")
    assert (await bot.record("1")).chat.limit is None
    await bot.say("1", "/lang ko")
    assert (await bot.say("1", "/limit 50")).text.startswith("요약 한 번에 페이지를 최대 50개까지")
    assert "요약당 페이지: 최대 50개" in (await bot.say("1", "/settings")).text


async def test_in_a_group_only_administrators_set_limit_and_quiet(bot: Bot) -> None:
    for text in ("/limit 5", "/quiet 22:00-07:00", "/mode weekly"):
        reply = await bot.say(GROUP, text, group=True, admin=False)
        assert reply.text == "Only this group's administrators can change its subscription."
    record = await bot.record(GROUP)
    assert record.chat.limit is None and record.chat.quiet is None
    await bot.say(GROUP, "/limit 5", group=True, admin=True)
    assert (await bot.record(GROUP)).chat.limit == 5


# ------------------------------------------------------------------ votes and ranking


async def digest_pages(bot: Bot, chat_id: str) -> list[int]:
    rows = await bot.outbox_rows(chat_id)
    payload = rows[-1][2]
    return [int(p) for p, _ in payload["pages"]]  # type: ignore[attr-defined]


async def test_votes_are_per_user_undone_and_replaced(bot: Bot) -> None:
    world = bot.world
    await bot.say(GROUP, "/subscribe *", group=True)
    await world.publish("p/a", tags="[rl, reasoning]")
    page = await bot.page_id("p/a")
    await bot.say(GROUP, "/latest", group=True)  # a vote counts for a page the chat was shown
    up, down = votes.action(page, up=True), votes.action(page, up=False)

    assert await bot.press(GROUP, up, user="1", group=True, admin=False) == Toast(
        "en", "Noted: pages like this will rank higher in your digests."
    )
    assert await bot.press(GROUP, up, user="2", group=True, admin=False) == Toast(
        "en", "Noted: pages like this will rank higher in your digests."
    )
    assert await bot.weights(GROUP) == pytest.approx({"rl": 2.0, "reasoning": 2.0})
    # Pressing again takes the vote back; the other button replaces it.
    assert await bot.press(GROUP, up, user="2", group=True) == Toast(
        "en", "Your vote is taken back."
    )
    assert await bot.weights(GROUP) == pytest.approx({"rl": 1.0, "reasoning": 1.0})
    assert await bot.press(GROUP, down, user="1", group=True) == Toast(
        "en", "Noted: pages like this will rank lower in your digests."
    )
    assert await bot.weights(GROUP) == pytest.approx({"rl": -1.0, "reasoning": -1.0})
    shown = (await bot.say(GROUP, "/feedback", group=True)).text
    assert "Disliked: reasoning -1.0, rl -1.0" in shown and "Liked:" not in shown
    await bot.say(GROUP, "/lang ko", group=True)
    assert await bot.press(GROUP, up, user="1", group=True) == Toast(
        "ko", "반영했습니다. 앞으로 이런 페이지를 요약에서 더 위에 보여 드립니다."
    )
    assert "좋아한 태그: reasoning +1.0, rl +1.0" in (await bot.say(GROUP, "/feedback")).text


@pytest.mark.parametrize(
    ("lang", "up", "down", "undone"),
    [
        (
            "en",
            "Noted: pages like this will rank higher in your digests.",
            "Noted: pages like this will rank lower in your digests.",
            "Your vote is taken back.",
        ),
        (
            "ko",
            "반영했습니다. 앞으로 이런 페이지를 요약에서 더 위에 보여 드립니다.",
            "반영했습니다. 앞으로 이런 페이지는 요약에서 더 아래에 보여 드립니다.",
            "투표를 취소했습니다.",
        ),
    ],
)
async def test_vote_toasts_are_whole_sentences(
    bot: Bot, lang: str, up: str, down: str, undone: str
) -> None:
    await bot.world.publish("p/a", tags="[rl]")
    page = await bot.page_id("p/a")
    await bot.say("1", f"/lang {lang}")
    await bot.say("1", "/subscribe rl")
    await bot.say("1", "/latest")
    assert await bot.press("1", votes.action(page, up=True)) == Toast(lang, up)
    assert await bot.press("1", votes.action(page, up=False)) == Toast(lang, down)
    assert await bot.press("1", votes.action(page, up=False)) == Toast(lang, undone)


@pytest.mark.parametrize("action", ["vote:+:abc", "vote:+:", "vote:x:1", "vote:"])
async def test_a_malformed_vote_is_refused_with_a_toast(bot: Bot, action: str) -> None:
    assert await bot.press("1", action) == Toast("en", "That button no longer works.")
    assert await bot.weights("1") == {}


async def test_a_vote_for_an_unknown_page_or_without_a_user_stores_nothing(bot: Bot) -> None:
    assert await bot.press("1", votes.action(999_999, up=True)) == Toast(
        "en", "That button no longer works."
    )
    await bot.world.publish("p/a", tags="[rl]")
    page = await bot.page_id("p/a")
    await bot.say("1", "/subscribe rl")
    await bot.say("1", "/latest")
    assert await bot.press("1", votes.action(page, up=True), user="") == Toast(
        "en", "That button no longer works."
    )
    assert await bot.weights("1") == {}


async def test_a_page_a_digest_brought_takes_a_vote_and_one_it_did_not_is_refused(
    bot: Bot,
) -> None:
    """The ledger is what the chat received: a digest's page takes votes (and a chat that
    moves keeps them), a page the planner never sent to it does not."""
    await bot.say(GROUP, "/subscribe rl", group=True)
    await bot.world.publish("p/sent", tags="[rl]")
    await bot.world.publish("p/other", tags="[vision]")
    assert await bot.world.plan() == 1
    sent, other = await bot.page_id("p/sent"), await bot.page_id("p/other")
    assert await digest_pages(bot, GROUP) == [sent]
    refused = Toast("en", "That button no longer works.")
    assert await bot.press(GROUP, votes.action(other, up=True), user="1", group=True) == refused
    assert await bot.press(GROUP, votes.action(sent, up=True), user="1", group=True) == Toast(
        "en", "Noted: pages like this will rank higher in your digests."
    )
    assert await bot.core.chat_moved(
        platform=Platform.TELEGRAM, old_chat_id=GROUP, new_chat_id="-100778"
    )
    assert await bot.press("-100778", votes.action(sent, up=False), user="1", group=True) == (
        Toast("en", "Noted: pages like this will rank lower in your digests.")
    )
    assert await bot.weights("-100778") == pytest.approx({"rl": -1.0})


async def test_feedback_without_votes_and_with_a_bad_argument(bot: Bot) -> None:
    text = (await bot.say("1", "/feedback")).text
    assert "Nothing yet: press 👍 or 👎" in text and "counts half after 30 days" in text
    assert (await bot.say("1", "/feedback now")).text == "Use /feedback or /feedback reset."
    await bot.say("1", "/lang ko")
    assert "아직 투표가 없습니다." in (await bot.say("1", "/feedback")).text
    reply = await bot.say("1", "/feedback 지금")
    assert reply.text == "/feedback 또는 /feedback reset 명령어를 쓰세요."


async def test_feedback_reset_asks_first_and_forgets_on_confirmation(bot: Bot) -> None:
    await bot.world.publish("p/a", tags="[rl]")
    page = await bot.page_id("p/a")
    await bot.say(GROUP, "/subscribe rl", group=True)
    await bot.say(GROUP, "/latest", group=True)
    await bot.press(GROUP, votes.action(page, up=True), user="1", group=True)
    await bot.press(GROUP, votes.action(page, up=True), user="2", group=True)
    ask = await bot.say(GROUP, "/feedback reset", group=True, admin=False)
    assert ask.text.startswith("Forget every 👍 and 👎")
    assert [[(b.label, b.action) for b in row] for row in ask.buttons] == [
        [("Forget them", "fbreset:yes"), ("Keep them", "fbreset:no")]
    ]
    assert await bot.weights(GROUP) == pytest.approx({"rl": 2.0})  # nothing yet
    refused = await bot.press(GROUP, "fbreset:yes", group=True, admin=False)
    assert isinstance(refused, Reply) and "administrators" in refused.text
    kept = await bot.press(GROUP, "fbreset:no", group=True, admin=False)
    assert isinstance(kept, Reply) and kept.text == "Kept; nothing was changed."
    assert await bot.weights(GROUP) == pytest.approx({"rl": 2.0})
    done = await bot.press(GROUP, "fbreset:yes", group=True, admin=True)
    assert isinstance(done, Reply)
    assert done.text == "Forgotten (votes: 2). Digests are back to the usual order."
    assert await bot.weights(GROUP) == {}
    await bot.say(GROUP, "/lang ko", group=True)
    ask = await bot.say(GROUP, "/feedback reset", group=True)
    assert [b.label for b in ask.buttons[0]] == ["초기화", "그대로 두기"]


async def test_digests_rank_by_votes_cut_at_the_limit_and_reset_restores_the_order(
    bot: Bot,
) -> None:
    world = bot.world
    await bot.say("1", "/subscribe *")
    await world.publish("p/liked", tags="[vision]")
    await world.publish("p/disliked", tags="[robotics]")
    await bot.say("1", "/latest")
    await bot.press("1", votes.action(await bot.page_id("p/liked"), up=True))
    await bot.press("1", votes.action(await bot.page_id("p/disliked"), up=False))
    assert await world.plan() == 1  # the first digest: those two

    # Three new pages; the usual order is newest first (they match one tag each).
    write(world.root, "q/robot.md", page_text("robot", "[robotics]", "2026-11-03"))
    write(world.root, "q/plain.md", page_text("plain", "[nlp]", "2026-11-02"))
    write(world.root, "q/eyes.md", page_text("eyes", "[vision]", "2026-11-01"))
    await world.poller.poll()
    robot, plain, eyes = [await bot.page_id(f"q/{k}") for k in ("robot", "plain", "eyes")]
    await bot.say("1", "/limit 2")
    assert await world.plan() == 1
    rows = await bot.outbox_rows("1")
    payload = rows[-1][2]
    assert [p for p, _ in payload["pages"]] == [eyes, plain]  # type: ignore[attr-defined]
    assert payload["rest"] == [robot] and payload["ranked"] is True
    why = (await bot.say("1", "/why q/robot")).text
    assert "It will be counted in the “more” of the digest of" in why
    async with world.engine.begin() as conn:
        await outbox.sent(conn, row_id=rows[-1][0], now=dt.datetime(2026, 12, 3, 9, 0))
    why = (await bot.say("1", "/why q/robot")).text
    assert "Counted in the “more” of the digest of" in why and "(/latest shows it)" in why

    # After a reset, the next digest has the usual order again.
    await bot.press("1", "fbreset:yes")
    await bot.say("1", "/limit off")
    write(world.root, "r/robot.md", page_text("robot2", "[robotics]", "2026-11-03"))
    write(world.root, "r/plain.md", page_text("plain2", "[nlp]", "2026-11-02"))
    write(world.root, "r/eyes.md", page_text("eyes2", "[vision]", "2026-11-01"))
    await world.poller.poll()
    assert await world.plan() == 1
    expected = [await bot.page_id(f"r/{k}") for k in ("robot", "plain", "eyes")]
    assert await digest_pages(bot, "1") == expected


def page_text(title: str, tags: str, date: str, *, arxiv: str | None = None) -> str:
    lines = ["---", f'title: "{title}"', f"created: {date}", f"updated: {date}", f"tags: {tags}"]
    if arxiv:
        lines.append(f'arxiv: "{arxiv}"')
    return "\n".join([*lines, "---", "", "## TL;DR", "", f"About {title}.", ""])


# ------------------------------------------------------------------ why


async def test_why_names_a_page_by_arxiv_id_path_slug_or_link(bot: Bot) -> None:
    world = bot.world
    await bot.say("1", "/subscribe rl -robotics")
    key = "papers/2026/2608.27351-evolution-strategies-reasoning"
    body = page_text("ES for reasoning", "[rl, reasoning]", "2026-11-05", arxiv="2608.27351")
    write(world.root, f"{key}.en.md", body)
    await world.poller.poll()
    for ref in (
        "2608.27351",
        "arXiv:2608.27351v2",
        f"{key}.en.md",
        key,
        "evolution-strategies-reasoning",
        "https://arxiv.org/abs/2608.27351v1",
        f"https://wiki.example.org/{key}",
    ):
        text = (await bot.say("1", f"/why {ref}")).text
        assert text.startswith("“ES for reasoning”"), ref
        assert "Your filter matches it: it carries rl, which you follow." in text
        assert "It will be in the next digest, " in text


@pytest.mark.parametrize("ref", ["2699.99999", "no-such-slug", "https://example.org/x", "a/b/c"])
async def test_why_for_an_unknown_page_suggests_latest(bot: Bot, ref: str) -> None:
    text = (await bot.say("1", f"/why {ref}")).text
    assert text == f"I don't know a page “{ref}”. /latest shows the newest pages for your filter."
    await bot.say("1", "/lang ko")
    assert "/latest 명령어로" in (await bot.say("1", f"/why {ref}")).text


@pytest.mark.parametrize("args", ["", "two words", "x" * 501, "bad\x00ref", "%%%"])
async def test_why_with_a_malformed_page_gets_the_usage(bot: Bot, args: str) -> None:
    text = (await bot.say("1", f"/why {args}")).text
    assert text == ("Give a page: an arXiv id (/why 2608.27351), a wiki path or slug, or a link.")


async def test_why_says_what_happened_for_every_outcome(bot: Bot) -> None:
    world = bot.world
    # The baseline page, there at the first scan.
    await bot.say("1", "/subscribe rl")
    text = (await bot.say("1", "/why p/old")).text
    assert "Skipped: it was already in the wiki at the first scan" in text
    await world.publish("p/before", tags="[rl]")
    # Subscribed after it was published.
    await bot.say("2", "/subscribe rl")
    assert "published before this chat subscribed" in (await bot.say("2", "/why before")).text

    # Queued, then sent, then failed.
    await world.publish("p/a", tags="[rl]")
    assert await world.plan() >= 1
    assert "Queued: due " in (await bot.say("2", "/why p/a")).text
    rows = await bot.outbox_rows("2")
    async with world.engine.begin() as conn:
        await outbox.sent(conn, row_id=rows[-1][0], now=dt.datetime(2026, 12, 3, 9, 0))
    await bot.say("2", "/timezone Asia/Seoul")
    text = (await bot.say("2", "/why p/a")).text
    assert "Sent 2026-12-03 18:00 (Asia/Seoul) in the digest of " in text
    async with world.engine.begin() as conn:
        await outbox.fail(conn, row_id=rows[-1][0], error="Forbidden: bot was blocked", attempts=1)
    assert "Sending it failed: Forbidden: bot was blocked" in (await bot.say("2", "/why p/a")).text

    # Sent as an instant message.
    await bot.say("3", "/subscribe rl")
    await bot.say("3", "/mode instant")
    await world.publish("p/b", tags="[rl]")
    await world.plan()
    rows = await bot.outbox_rows("3")
    async with world.engine.begin() as conn:
        await outbox.sent(conn, row_id=rows[-1][0], now=dt.datetime(2026, 12, 3, 9, 0))
    assert (
        "Sent 2026-12-03 09:00 (UTC) as a message of its own."
        in (await bot.say("3", "/why p/b")).text
    )

    # Left out by the filter.
    await bot.say("4", "/subscribe rl -robotics")
    await world.publish("p/robot", tags="[rl, robotics]")
    text = (await bot.say("4", "/why p/robot")).text
    assert "Your filter leaves it out: it carries robotics, which you excluded." in text
    assert "So it was not sent here." in text
    assert text.count("leaves it out") == 1  # said once, not on two lines
    await bot.say("4", "/subscribe +vision")
    text = (await bot.say("4", "/why p/robot")).text
    assert "lacks vision, which you require" in text and text.count("leaves it out") == 1

    # Paused now; paused then (skipped on resume); inactive.
    await bot.say("5", "/subscribe rl")
    await bot.say("5", "/pause")
    await world.publish("p/c", tags="[rl]")
    assert (
        "Not sent: deliveries are paused here; /resume restarts them."
        in (await bot.say("5", "/why p/c")).text
    )
    await bot.say("5", "/resume")
    assert (
        "Skipped: it came while deliveries here were paused or off"
        in (await bot.say("5", "/why p/c")).text
    )
    await bot.say("6", "/subscribe rl")
    await world.publish("p/d", tags="[rl]")
    record = await bot.record("6")
    async with world.engine.begin() as conn:
        await chat_store.deactivate(
            conn, pk=record.pk, reason="blocked by the user", code="blocked"
        )
    assert (
        "Not sent: the bot could not reach this chat (blocked by the user)"
        in (await bot.say("6", "/why p/d")).text
    )

    # Korean: the same facts, in Korean.
    await bot.say("4", "/lang ko")
    text = (await bot.say("4", "/why p/robot")).text
    assert "제외한 robotics 태그가 있고, 반드시 있어야 하는 vision 태그가 없어서" in text
    assert "그래서 이 채팅에는 보내지 않았습니다." in text
    assert text.count("필터에") == 1  # said once, not on two lines


async def test_why_in_instant_mode_before_planning(bot: Bot) -> None:
    await bot.say("1", "/subscribe rl")
    await bot.say("1", "/mode instant")
    await bot.world.publish("p/a", tags="[rl]")
    assert "It goes out within a minute." in (await bot.say("1", "/why p/a")).text


async def test_settings_in_korean_show_the_next_digest_and_how_long(bot: Bot) -> None:
    await bot.say("1", "/lang ko")
    await bot.say("1", "/subscribe rl")  # a chat that follows nothing gets no digest
    await bot.say("1", "/mode weekly sun")
    record = await bot.record("1")
    assert record.chat.state == ChatState.ACTIVE
    text = (await bot.say("1", "/settings")).text
    assert "주간 요약 요일: 일요일" in text
    assert "다음 요약: " in text and "(UTC), " in text and "후" in text
    assert "방해 금지 시간: 꺼짐" in text and "요약당 페이지: 제한 없음" in text
    assert record.chat.weekday == 6


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_feedback_shows_cancelled_votes_truthfully(bot: Bot, lang: str) -> None:
    """Votes that cancel out show no "-0.0" tag and say they cancel; a second "Forget
    them" says there is nothing left to forget (issue: replies true, item 7)."""
    await bot.world.publish("p/a", tags="[rl, post-training]")
    await bot.world.publish("p/b", tags="[post-training]")
    a, b = await bot.page_id("p/a"), await bot.page_id("p/b")
    await bot.say(GROUP, f"/lang {lang}", group=True)
    await bot.say(GROUP, "/subscribe *", group=True)
    await bot.say(GROUP, "/latest", group=True)
    await bot.press(GROUP, votes.action(a, up=True), user="1", group=True)
    await bot.press(GROUP, votes.action(a, up=False), user="2", group=True)
    text = (await bot.say(GROUP, "/feedback", group=True)).text
    cancelled = {"en": "cancel out", "ko": "상쇄"}[lang]
    assert cancelled in text and "0.0" not in text
    await bot.press(GROUP, votes.action(b, up=True), user="1", group=True)
    await bot.press(GROUP, votes.action(b, up=False), user="3", group=True)
    await bot.press(GROUP, votes.action(a, up=True), user="2", group=True)
    text = (await bot.say(GROUP, "/feedback", group=True)).text
    assert "0.0" not in text and "rl +2.0" in text
    await bot.press(GROUP, "fbreset:yes", group=True)
    again = await bot.press(GROUP, "fbreset:yes", group=True)
    assert isinstance(again, Reply)
    assert (
        again.text
        == {
            "en": "There are no votes to forget; nothing was changed.",
            "ko": "초기화할 투표가 없습니다. 아무것도 바뀌지 않았습니다.",
        }[lang]
    )
