"""A newcomer's first commands on the sample wiki, through the command core and the planner,
on SQLite and PostgreSQL, in English and Korean: the welcome digest, help, current values,
the next digest, zones, ``*``, plurals and confirmations that tell the truth."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import TAGS_SHOWN, Caller, CommandCore, Defaults
from bot.commands.operator import Admin
from bot.matching.offers import WELCOME_MAX, WELCOME_MIN
from bot.matching.planner import Planner
from bot.models import Platform, Reply
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import current
from bot.store.schema import broadcasts, page_tags, pages
from bot.util import utcnow
from tests.conftest import ROOT, Settings
from tests.integration.test_planner import queued_for

WIKI = ROOT / "bot" / "sample_wiki"


@dataclass
class Newcomer:
    engine: AsyncEngine
    core: CommandCore
    planner: Planner
    caller: Caller

    async def say(self, text: str) -> str:
        reply = await self.core.handle(self.caller, text)
        return reply.text

    async def reply(self, text: str) -> Reply:
        return await self.core.handle(self.caller, text)

    async def digests(self) -> list[dict[str, object]]:
        return await queued_for(
            self.engine, platform=self.caller.platform, chat_id=self.caller.chat_id
        )


async def newcomer(
    engine: AsyncEngine, *, lang: str = "en", welcome_days: int = 30, chat_id: str = "local"
) -> Newcomer:
    async with make_feed_client() as http:
        poller = Poller(
            engine=engine, sources=[str(WIKI)], base_url=None, default_lang="en", http=http
        )
        await poller.poll()  # the first scan: a baseline, nothing queued
    planner = Planner(engine=engine, welcome_days=welcome_days)
    core = CommandCore(engine=engine, defaults=Defaults(lang=lang), digests=planner)
    caller = Caller(platform=Platform.CONSOLE, chat_id=chat_id, user_id=chat_id)
    return Newcomer(engine, core, planner, caller)


@pytest.fixture
async def user(engine: AsyncEngine) -> AsyncIterator[Newcomer]:
    yield await newcomer(engine)


# ---------------------------------------------------------------- item 1: the welcome digest


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_the_first_digest_brings_recent_pages_once(engine: AsyncEngine, lang: str) -> None:
    """The sample wiki is a baseline, yet the first /digest is not empty; the second is."""
    user = await newcomer(engine, lang=lang, welcome_days=10_000)
    subscribed = await user.say("/subscribe rl")
    if lang == "en":
        assert re.search(
            r"Your first digest comes (today|tomorrow) at 09:00 \(UTC\), in ", subscribed
        )
        assert "/digest sends it now." in subscribed
    else:
        assert re.search(r"첫 요약은 (오늘|내일) 09:00\(UTC\)에 옵니다\(", subscribed)
        assert "/digest를 입력하세요." in subscribed
    first = await user.say("/digest")
    assert first.startswith("Sending your digest now (" if lang == "en" else "지금 요약을 보냅니다")
    [row] = await user.digests()
    assert row["kind"] == "digest" and row["welcome"] is True
    assert 1 <= len(row["pages"]) <= 10  # type: ignore[arg-type]

    again = await user.say("/digest")
    assert again == (
        "Nothing new for your filter since the last digest."
        if lang == "en"
        else "지난 요약 이후 필터에 맞는 새 페이지가 없습니다."
    )
    assert len(await user.digests()) == 1
    # A chat that had its first digest is not told about one again.
    await user.say("/unsubscribe all")
    again_subscribed = await user.say("/subscribe vision")
    assert again_subscribed.startswith("Your filter now" if lang == "en" else "현재 필터")
    assert "first digest" not in again_subscribed and "첫 요약" not in again_subscribed


async def test_with_no_page_that_recent_the_welcome_takes_the_newest_few(
    engine: AsyncEngine,
) -> None:
    """With a 0-day window no sample page is recent enough: the newest matching ones come."""
    user = await newcomer(engine, welcome_days=0)
    await user.say("/subscribe *")
    await user.say("/digest")
    [row] = await user.digests()
    assert len(row["pages"]) == WELCOME_MIN  # type: ignore[arg-type]
    async with engine.connect() as conn:
        rows = await conn.execute(select(pages.c.id, pages.c.created, pages.c.updated))
        dates = {page_id: updated or created for page_id, created, updated in rows}
    chosen = [dates[int(page_id)] for page_id, _ in row["pages"]]  # type: ignore[union-attr]
    assert min(chosen) >= sorted(dates.values(), reverse=True)[WELCOME_MIN - 1]


async def test_a_few_recent_pages_are_topped_up_to_the_newest_few(engine: AsyncEngine) -> None:
    """Fewer than WELCOME_MIN matching pages in the window: older ones make up the number,
    as .env.example and the configuration and commands pages say."""
    probe = await newcomer(engine, chat_id="probe")
    async with engine.connect() as conn:
        rows = await conn.execute(select(pages.c.created, pages.c.updated))
        dates = sorted({updated or created for created, updated in rows}, reverse=True)
    # A window that holds the pages of the newest two dates only: fewer than WELCOME_MIN.
    today = utcnow().date()
    days = (today - dates[1]).days
    user = Newcomer(
        probe.engine,
        probe.core,
        Planner(engine=engine, welcome_days=days),
        Caller(platform=Platform.CONSOLE, chat_id="late", user_id="late"),
    )
    await user.say("/subscribe *")
    await user.say("/digest")
    [row] = await user.digests()
    async with engine.connect() as conn:
        rows = await conn.execute(select(pages.c.id, pages.c.created, pages.c.updated))
        by_id = {page_id: updated or created for page_id, created, updated in rows}
    chosen = sorted((by_id[int(page_id)] for page_id, _ in row["pages"]), reverse=True)  # type: ignore[union-attr]
    recent = [day for day in chosen if day >= dates[1]]
    assert 0 < len(recent) < WELCOME_MIN
    assert len(chosen) == WELCOME_MIN
    assert chosen[len(recent)] < dates[1]  # older pages, the newest of them
    assert min(chosen) >= sorted(by_id.values(), reverse=True)[WELCOME_MIN - 1]


@pytest.mark.parametrize(
    "page",
    [".env.example", "docs/configuration.md", "docs/commands.md", "docs/reference/environment.md"],
)
def test_every_page_states_the_welcome_rule_the_code_follows(page: str) -> None:
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    text = text.replace("# ", "")
    assert f"at most {WELCOME_MAX}" in text
    assert f"at least the newest {WELCOME_MIN}" in text
    assert "when none is that recent" not in text


async def test_the_scheduled_first_digest_is_the_welcome(engine: AsyncEngine) -> None:
    """Without /digest the welcome rides the first scheduled digest, and only that one."""
    user = await newcomer(engine, welcome_days=10_000)
    await user.say("/subscribe rl")
    later = utcnow() + dt.timedelta(days=2)
    assert await user.planner.plan_due(now=later) == 1
    assert await user.planner.plan_due(now=later + dt.timedelta(days=2)) == 0
    [row] = await user.digests()
    assert row["welcome"] is True


async def test_digest_with_no_filter_says_so(user: Newcomer) -> None:
    assert "follows nothing yet" in await user.say("/digest")
    await user.say("/lang ko")
    assert "구독 중인 태그가 없어서 요약이 없습니다" in await user.say("/digest")


# ---------------------------------------------------------------- item 5: help, suggestions


@pytest.mark.parametrize(
    ("lang", "expected"),
    [("en", "/subscribe * — every page"), ("ko", "/subscribe * — 모든 페이지")],
)
async def test_help_command_explains_one_command(
    engine: AsyncEngine, lang: str, expected: str
) -> None:
    user = await newcomer(engine, lang=lang)
    text = await user.say("/help subscribe")
    assert expected in text and "/unsubscribe all" not in text
    assert await user.say("/help /subscribe") == text
    assert await user.say("/help subscrbe") == text  # close enough to suggest


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "I don't know “subscrbe”. Did you mean /subscribe? /help lists the commands."),
        (
            "ko",
            "“subscrbe” 명령어는 없습니다. /subscribe 명령어를 찾으셨나요? "
            "명령어 목록은 /help로 볼 수 있습니다.",
        ),
    ],
)
async def test_an_unknown_command_suggests_the_closest(
    engine: AsyncEngine, lang: str, expected: str
) -> None:
    user = await newcomer(engine, lang=lang)
    assert await user.say("/subscrbe rl") == expected
    far = await user.say("/xyzzy")
    assert "/subscribe" not in far and ("xyzzy" in far)


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_mode_time_timezone_lang_without_argument_show_the_current_value(
    engine: AsyncEngine, lang: str
) -> None:
    user = await newcomer(engine, lang=lang)
    await user.say("/timezone Asia/Seoul")
    await user.say("/time 07:30")
    mode, time_, zone, language = [
        await user.say(f"/{name}") for name in ("mode", "time", "timezone", "lang")
    ]
    if lang == "en":
        assert mode == (
            "Mode: daily digest. Change it with /mode daily, /mode weekly [mon…sun] "
            "or /mode instant."
        )
        assert time_.startswith("The daily digest comes at 07:30 (Asia/Seoul).")
        assert zone.startswith("This chat's time zone is Asia/Seoul.")
        assert language.startswith("Replies here are in English.")
    else:
        assert mode.startswith("방식: 일일 요약.")
        assert time_.startswith("일일 요약은 07:30(Asia/Seoul)에 옵니다.")
        assert zone.startswith("이 채팅의 시간대는 Asia/Seoul입니다.")
        assert language.startswith("이 채팅의 답장 언어는 한국어입니다.")


# ---------------------------------------------------------------- item 6: the next digest


@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_settings_shows_the_next_digest_and_none_in_instant_mode(
    engine: AsyncEngine, lang: str
) -> None:
    user = await newcomer(engine, lang=lang)
    await user.say("/subscribe rl")  # a chat that follows nothing gets no digest
    at = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=3, minutes=20)).strftime("%H:%M")
    await user.say(f"/time {at}")
    text = await user.say("/settings")
    if lang == "en":
        assert re.search(
            rf"Next digest: (today|tomorrow) at {at} \(UTC\), in 3 h (19|20) min", text
        )
    else:
        assert re.search(rf"다음 요약: (오늘|내일) {at}\(UTC\), 3시간 (19|20)분 후", text)
    await user.say("/mode instant")
    after = await user.say("/settings")
    assert "Next digest" not in after and "다음 요약" not in after


# ---------------------------------------------------------------- item 7: zones


@pytest.mark.parametrize(
    ("typed", "zone"),
    [
        ("KST", "Asia/Seoul"),
        ("jst", "Asia/Tokyo"),
        # stored as Etc/GMT-9 and Etc/GMT+5, shown as people write an offset
        ("UTC+9", "UTC+9"),
        ("+09:00", "UTC+9"),
        ("GMT-5", "UTC-5"),
        ("asia/seoul", "Asia/Seoul"),
    ],
)
async def test_timezone_takes_aliases_and_offsets(user: Newcomer, typed: str, zone: str) -> None:
    assert (await user.say(f"/timezone {typed}")).startswith(f"Time zone set to {zone};")


@pytest.mark.parametrize(
    ("page", "lang"), [("docs/commands.md", "en"), ("docs/ko/commands.md", "ko")]
)
async def test_the_commands_page_shows_offsets_as_the_reply_does(
    engine: AsyncEngine, page: str, lang: str
) -> None:
    """The timezone row's offsets (`UTC+9`, `+09:00`, `GMT-5`) are shown in the reply as the
    page says they are."""
    [row] = [
        line
        for line in (ROOT / page).read_text(encoding="utf-8").splitlines()
        if line.startswith("| `timezone ")
    ]
    offsets = re.search(r"\(`UTC\+9`, `\+09:00`, `GMT-5`: ([^)]*)\)", row)
    assert offsets is not None, row
    shown = re.findall(r"`(UTC[+-]\d+)`", offsets[1])
    assert shown == ["UTC+9", "UTC-5"]
    user = await newcomer(engine, lang=lang)
    for typed, label in (("UTC+9", "UTC+9"), ("+09:00", "UTC+9"), ("GMT-5", "UTC-5")):
        reply = await user.say(f"/timezone {typed}")
        assert label in reply and (typed == label or typed not in reply)
        assert f"({label})" in await user.say("/settings")
        assert f" tz={label} " in await user.say("/export")


@pytest.mark.parametrize(
    "typed",
    # IST names three zones: it is answered as ambiguous (tests/integration/test_replies.py)
    ["localtime", "Factory", "posixrules", "posix/Asia/Seoul", "Mars/Olympus", "UTC+15"],
)
@pytest.mark.parametrize("lang", ["en", "ko"])
async def test_a_zone_that_is_not_a_place_is_refused_in_one_line(
    engine: AsyncEngine, typed: str, lang: str
) -> None:
    user = await newcomer(engine, lang=lang)
    text = await user.say(f"/timezone {typed}")
    assert "\n" not in text
    assert text.startswith(
        f"“{typed}” is not a time zone" if lang == "en" else f"“{typed}” 시간대는"
    )
    assert "UTC" in await user.say("/timezone")  # nothing changed


# ---------------------------------------------------------------- item 8: *


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "Your filter now: every page, except robotics"),
        ("ko", "현재 필터: 모든 페이지(robotics 태그가 있는 페이지 제외)"),
    ],
)
async def test_star_says_exactly_what_it_lets_through(
    engine: AsyncEngine, lang: str, expected: str
) -> None:
    user = await newcomer(engine, lang=lang)
    assert (await user.say("/subscribe * -robotics")).startswith(expected)
    reply = await user.reply("/latest 20")
    assert reply.items and all("robotics" not in item.page.tags for item in reply.items)
    async with user.engine.connect() as conn:
        total = len({p for (p,) in await conn.execute(select(page_tags.c.page_id))})
        robotic = len(
            {
                p
                for (p,) in await conn.execute(
                    select(page_tags.c.page_id).where(page_tags.c.tag == "robotics")
                )
            }
        )
    assert len(reply.items) == total - robotic  # every page but those: the sample has < 20


async def test_star_with_a_required_tag_and_only_excluded_tags(user: Newcomer) -> None:
    assert "every page that has rl" in await user.say("/subscribe * +rl")
    await user.say("/unsubscribe all")
    text = await user.say("/subscribe -robotics")
    assert "no page (only excluded tags: robotics)" in text


# ---------------------------------------------------------------- item 9: plurals


@pytest.mark.parametrize(
    ("lang", "one", "many"),
    [
        ("en", "The newest page for your filter:", "The newest 3 pages for your filter:"),
        ("ko", "필터에 맞는 최신 페이지 1개:", "필터에 맞는 최신 페이지 3개:"),
    ],
)
async def test_latest_counts_in_the_right_form(
    engine: AsyncEngine, lang: str, one: str, many: str
) -> None:
    user = await newcomer(engine, lang=lang)
    await user.say("/subscribe rl")
    assert (await user.say("/latest 1")) == one
    assert (await user.say("/latest 3")) == many


# ---------------------------------------------------------------- item 10: the truth


@pytest.mark.parametrize(
    ("lang", "expected"),
    [("en", "there was nothing to remove"), ("ko", "해지할 것이 없습니다")],
)
async def test_unsubscribe_all_on_an_empty_filter_says_nothing_was_removed(
    engine: AsyncEngine, lang: str, expected: str
) -> None:
    user = await newcomer(engine, lang=lang)
    assert expected in await user.say("/unsubscribe all")
    await user.say("/subscribe rl")
    assert expected not in await user.say("/unsubscribe all")


@pytest.mark.parametrize(
    ("lang", "nothing"), [("en", "Nothing was changed."), ("ko", "아무것도 바뀌지 않았습니다.")]
)
async def test_the_51st_tag_and_a_bad_time_say_nothing_changed_once(
    engine: AsyncEngine, lang: str, nothing: str
) -> None:
    user = await newcomer(engine, lang=lang)
    await user.say("/subscribe " + " ".join(f"t{n}" for n in range(50)))
    refused = await user.say("/subscribe one-more")
    assert refused.count(nothing) == 1 and "50" in refused
    bad_time = await user.say("/time 25:00")
    assert "25:00" in bad_time and bad_time.count(nothing) == 1
    assert "09:00" in await user.say("/time")


# ---------------------------------------------------------------- issue 10 item 9: tags


async def test_tags_lists_the_most_used_hundred_and_counts_the_rest(user: Newcomer) -> None:
    async with user.engine.begin() as conn:
        known = len(await current.tag_counts(conn))
        page_id = (await conn.execute(select(pages.c.id).limit(1))).scalar_one()
        await conn.execute(
            insert(page_tags),
            [
                {"page_id": page_id, "tag": f"bulk{n:05d}", "position": 100 + n}
                for n in range(10_000)
            ],
        )
    text = await user.say("/tags")
    assert text.splitlines()[1].count("(") == TAGS_SHOWN
    assert text.startswith("Tags in the wiki (pages):\nrl (8)")
    assert text.endswith(f"\n…and {known + 10_000 - TAGS_SHOWN} more tags.")
    await user.say("/lang ko")
    assert (await user.say("/tags")).splitlines()[-1].startswith("…외 태그 ")


# ---------------------------------------------------------------- items 10 and 11: admin


async def admin_newcomer(engine: AsyncEngine, *, lang: str, sources: list[str]) -> Newcomer:
    user = await newcomer(engine, lang=lang)
    settings = Settings(_env_file=None, wiki_sources=sources)  # type: ignore[call-arg]
    admin = Admin(engine=engine, settings=settings)
    user.core = CommandCore(
        engine=engine, defaults=Defaults(lang=lang), digests=user.planner, admin=admin
    )
    return user


@pytest.mark.parametrize(
    ("lang", "refusal"),
    [
        # the audience in words, not as the options that chose it
        (
            "en",
            "No chat would receive this broadcast (audience: active chats following nobody-follows",
        ),
        (
            "ko",
            "이 공지를 받을 채팅이 없어서 공지를 만들지 않았습니다 "
            "(대상: 활성 상태인 채팅 중 nobody-follows 태그를 구독하는 채팅",
        ),
    ],
)
async def test_a_broadcast_to_no_chat_is_refused_with_the_reason(
    engine: AsyncEngine, lang: str, refusal: str
) -> None:
    user = await admin_newcomer(engine, lang=lang, sources=[str(WIKI)])
    reply = await user.reply("/broadcast --tag nobody-follows Hello")
    assert reply.text.startswith(refusal) and reply.buttons == ()
    async with engine.connect() as conn:
        assert (await conn.execute(select(broadcasts.c.id))).first() is None
    await user.say("/subscribe rl")
    preview = await user.reply("/broadcast Hello")
    assert len(preview.buttons[0]) == 2
    assert ("to 1 chat (" if lang == "en" else "채팅 1개에 보냅니다") in preview.text


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        (
            "en",
            [
                "Chats: console 1 active",
                "Pages in the wiki: 15 pages (0 new today)",
                "Last 24 h: 0 sent, 0 failed; 0 queued now",
            ],
        ),
        (
            "ko",
            [
                "채팅: 콘솔 활성 1개",
                "위키 페이지: 15개 (오늘 새로 0개)",
                "최근 24시간: 0개 보냄, 0개 실패; 지금 대기 0개",
            ],
        ),
    ],
)
async def test_stats_in_the_chats_language_with_configured_sources_only(
    engine: AsyncEngine, lang: str, lines: list[str]
) -> None:
    """The sample wiki's first scan is a baseline: its pages are not "new today"; a source
    no longer configured is not listed."""
    user = await admin_newcomer(engine, lang=lang, sources=["/somewhere/else"])
    text = await user.say("/stats")
    for line in lines:
        assert line in text.splitlines(), text
    assert str(WIKI) not in text
    user = await admin_newcomer(engine, lang=lang, sources=[str(WIKI)])
    assert str(WIKI) in await user.say("/stats")


async def test_a_broadcast_preview_shows_and_sends_no_bidi_controls(engine: AsyncEngine) -> None:
    user = await admin_newcomer(engine, lang="en", sources=[str(WIKI)])
    await user.say("/subscribe rl")
    preview = await user.say("/broadcast Pay \u202eexe.gpj\u202c today\u200b")
    assert "Pay exe.gpj today" in preview
    async with engine.connect() as conn:
        [text] = (await conn.execute(select(broadcasts.c.text))).scalars().all()
    assert text == "Pay exe.gpj today"
