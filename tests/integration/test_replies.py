"""Every reply true: what a command answers is what the chat then has, in both languages.

Driven through the command core on each backend; the core is what Telegram, Slack and the
console share, so a reply checked here is the reply on all three.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import Caller, CommandCore, Defaults
from bot.matching.planner import Planner
from bot.models import ChatKind, Platform, Reply
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import chats as chat_store
from bot.store.schema import outbox as outbox_table
from bot.store.schema import pages
from bot.util import utcnow
from tests.integration.test_planner import queued_for


def console(chat_id: str = "c1") -> Caller:
    return Caller(platform=Platform.CONSOLE, chat_id=chat_id, user_id="u1")


def line_of(text: str, start: str) -> str:
    """The line of ``text`` that starts with ``start``, without its wait (``, in 5 h``),
    which moves with the clock."""
    found = [line for line in text.splitlines() if line.startswith(start)]
    assert found, f"no line starting {start!r} in {text!r}"
    return found[0].rsplit(",", 1)[0]


WIKI = Path(__file__).resolve().parents[2] / "bot" / "sample_wiki"

NEXT = {"en": "Next digest:", "ko": "다음 요약:"}


async def test_import_shows_the_imported_schedule(engine: AsyncEngine) -> None:
    """The next digest `import` shows is the one of the imported schedule, the one
    `settings` shows right after (item 1)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    for lang, chat_id in (("en", "c-en"), ("ko", "c-ko")):
        line = f'trendbot:1 filter="rl" mode=weekly day=tue time=10:00 tz=Europe/Berlin lang={lang}'
        await core.handle(console(chat_id), "/subscribe rl")
        imported = (await core.handle(console(chat_id), f"/import {line}")).text
        settings = (await core.handle(console(chat_id), "/settings")).text
        assert line_of(imported, NEXT[lang]) == line_of(settings, NEXT[lang])
        assert "10:00" in line_of(imported, NEXT[lang])


async def test_an_offset_reads_as_the_user_wrote_it(engine: AsyncEngine) -> None:
    """`timezone UTC+9` is stored as the tz database's Etc/GMT-9 and shown as UTC+9 in the
    reply, `settings` and `export`; the exported line imports back to the same zone (item 2)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    for lang in ("en", "ko"):
        caller = console(f"tz-{lang}")
        await core.handle(caller, f"/lang {lang}")
        for text in ("/timezone UTC+9", "/settings", "/export", "/timezone", "/time"):
            reply = (await core.handle(caller, text)).text
            assert "UTC+9" in reply, (text, reply)
            assert "GMT" not in reply, (text, reply)
        exported = (await core.handle(caller, "/export")).text.splitlines()[-1]
        await core.handle(caller, "/timezone UTC")
        await core.handle(caller, f"/import {exported}")
        assert (await stored(engine, f"tz-{lang}")).chat.timezone == "Etc/GMT-9"
    await core.handle(console("west"), "/timezone GMT-5")
    assert "UTC-5" in (await core.handle(console("west"), "/settings")).text


async def stored(engine: AsyncEngine, chat_id: str) -> chat_store.ChatRecord:
    async with engine.connect() as conn:
        record = await chat_store.get(conn, platform=Platform.CONSOLE, chat_id=chat_id)
    assert record is not None
    return record


NO_NEXT = {"en": "Next digest: none until this chat follows a tag", "ko": "다음 요약: 없음"}
NOTHING_COMES = {
    "en": "Nothing will come until this chat follows a tag",
    "ko": "아무것도 오지 않습니다",
}


async def test_a_chat_that_follows_nothing_is_told_no_digest_comes(engine: AsyncEngine) -> None:
    """A chat that follows nothing, or only excluded tags, is told that nothing comes until
    it follows a tag, not when its next digest is (item 3)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    for lang in ("en", "ko"):
        for setup in ("/settings", "/subscribe -robotics"):
            caller = console(f"none-{lang}-{setup}")
            await core.handle(caller, f"/lang {lang}")
            await core.handle(caller, setup)
            settings = (await core.handle(caller, "/settings")).text
            assert NEXT[lang] not in settings.replace(NO_NEXT[lang], "")
            assert NO_NEXT[lang] in settings
            for text in ("/time 07:00", "/timezone KST", "/mode weekly fri", "/mode daily"):
                assert NOTHING_COMES[lang] in (await core.handle(caller, text)).text, text
            await core.handle(caller, "/subscribe rl")
            settings = (await core.handle(caller, "/settings")).text
            assert NEXT[lang] in settings and NO_NEXT[lang] not in settings
            assert NOTHING_COMES[lang] not in (await core.handle(caller, "/time 08:00")).text


def write_page(root: Path, name: str, *, tags: str, created: dt.date) -> None:
    (root / f"{name}.md").write_text(
        f"---\ntitle: {name}\ntype: paper\ncreated: {created.isoformat()}\n"
        f"tags: [{tags}]\nlang: en\n---\n\n## TL;DR\n\nAbout {name}.\n",
        encoding="utf-8",
    )


async def test_every_list_of_pages_is_ranked_then_newest_and_never_dated_ahead(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """The welcome digest and `latest` list pages in one order, the digest's: more matched
    tags first, then newest; a page dated in the future counts from the day it was first
    seen, not as the newest page (item 4)."""
    today = utcnow().date()
    write_page(tmp_path, "aa-two", tags="rl, reasoning", created=dt.date(2026, 2, 1))
    write_page(tmp_path, "bb-future", tags="rl", created=dt.date(2099, 3, 1))
    write_page(tmp_path, "cc-old", tags="rl", created=dt.date(2026, 1, 1))
    write_page(tmp_path, "dd-new", tags="rl", created=today)

    async def scan() -> None:
        async with make_feed_client() as http:
            poller = Poller(
                engine=engine, sources=[str(tmp_path)], base_url=None, default_lang="en", http=http
            )
            await poller.poll()

    await scan()
    # The future page was first seen five days ago: it counts from then.
    async with engine.begin() as conn:
        await conn.execute(
            update(pages)
            .where(pages.c.key.like("%bb-future%"))
            .values(first_seen_at=utcnow() - dt.timedelta(days=5))
        )
    path = tmp_path / "bb-future.md"  # read again: its date is kept to that day
    path.write_text(path.read_text(encoding="utf-8") + "More.\n", encoding="utf-8")
    await scan()
    async with engine.connect() as conn:
        rows = (
            await conn.execute(select(pages.c.key, pages.c.created, pages.c.first_seen_at))
        ).all()
    for key, created, seen in rows:
        assert created <= seen.date(), key
    expected = ["aa-two", "dd-new", "bb-future", "cc-old"]

    planner = Planner(engine=engine, welcome_days=10_000)
    core = CommandCore(engine=engine, defaults=Defaults(), digests=planner)
    for lang in ("en", "ko"):
        caller = console(f"order-{lang}")
        await core.handle(caller, f"/lang {lang}")
        await core.handle(caller, "/subscribe rl reasoning")
        latest = await core.handle(caller, "/latest")
        assert [item.page.key.rsplit("/", 1)[-1].split(".")[0] for item in latest.items] == expected
        await core.handle(caller, "/digest")
        [row] = await queued_for(engine, platform=Platform.CONSOLE, chat_id=caller.chat_id)
        assert row["welcome"] is True
        async with engine.connect() as conn:
            keys = dict((await conn.execute(select(pages.c.id, pages.c.key))).all())
        shown = [keys[page_id] for page_id, _ in row["pages"]]  # type: ignore[attr-defined]
        assert [k.rsplit("/", 1)[-1].split(".")[0] for k in shown] == expected


async def test_digest_says_what_a_limit_lets_it_send(engine: AsyncEngine) -> None:
    """`limit 1` then `digest`: the reply says one page is shown and the others counted, as
    the digest then does (item 6)."""
    wiki = WIKI
    async with make_feed_client() as http:
        await Poller(
            engine=engine, sources=[str(wiki)], base_url=None, default_lang="en", http=http
        ).poll()
    core = CommandCore(engine=engine, defaults=Defaults(), digests=Planner(engine=engine))
    expected = {
        "en": "the 1 best-ranked of {count} pages",
        "ko": "페이지 {count}개 중 순위가 높은 1개",
    }
    for lang in ("en", "ko"):
        caller = console(f"limit-{lang}")
        await core.handle(caller, f"/lang {lang}")
        await core.handle(caller, "/subscribe *")
        await core.handle(caller, "/limit 1")
        text = (await core.handle(caller, "/digest")).text
        [row] = await queued_for(engine, platform=Platform.CONSOLE, chat_id=caller.chat_id)
        assert len(row["pages"]) == 1  # type: ignore[arg-type]
        count = 1 + len(row["rest"])  # type: ignore[arg-type]
        assert expected[lang].format(count=count) in text


async def test_pause_resume_and_settings_say_pages_meanwhile_are_skipped(
    engine: AsyncEngine,
) -> None:
    """Pages published during a pause are skipped: `pause` says so before it happens,
    `settings` while paused, `resume` after (item 9)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    skipped = {"en": "skipped", "ko": "건너뛰"}
    for lang in ("en", "ko"):
        caller = console(f"pause-{lang}")
        await core.handle(caller, f"/lang {lang}")
        for text in ("/pause", "/pause", "/settings", "/resume"):
            reply = (await core.handle(caller, text)).text
            assert skipped[lang] in reply or "건너뜁" in reply or "건너뜀" in reply, (text, reply)


async def test_a_members_digest_in_a_group_is_refused_for_the_true_reason(
    engine: AsyncEngine,
) -> None:
    """`digest` changes no subscription: a member who is not an admin is told that only
    administrators send the group's digest early (item 10)."""

    async def no() -> bool:
        return False

    core = CommandCore(engine=engine, defaults=Defaults())
    expected = {"en": "send its digest ahead of schedule", "ko": "먼저 요약을 보내는 것은"}
    for lang in ("en", "ko"):
        member = Caller(
            platform=Platform.TELEGRAM,
            chat_id=f"-100{len(lang)}{lang == 'ko'}",
            user_id="5",
            chat_kind=ChatKind.GROUP,
            can_manage=no,
            language_code=lang,
        )
        text = (await core.handle(member, "/digest")).text
        assert expected[lang] in text and "subscription" not in text and "구독" not in text
        assert "/settings" in text


async def test_the_tag_picker_says_when_the_first_digest_comes(engine: AsyncEngine) -> None:
    """Following a first tag by pressing it in the picker says when the first digest comes,
    as a typed `subscribe` does (item 11)."""
    wiki = WIKI
    async with make_feed_client() as http:
        await Poller(
            engine=engine, sources=[str(wiki)], base_url=None, default_lang="en", http=http
        ).poll()
    core = CommandCore(engine=engine, defaults=Defaults())
    first = {"en": "Your first digest comes", "ko": "첫 요약은"}
    for lang in ("en", "ko"):
        caller = console(f"pick-{lang}")
        await core.handle(caller, f"/lang {lang}")
        picker = await core.handle(caller, "/subscribe")
        action = picker.buttons[0][0].action
        pressed = await core.handle_action(caller, action)
        assert isinstance(pressed, Reply) and first[lang] in pressed.text
        assert pressed.buttons  # still the picker
        again = await core.handle_action(caller, picker.buttons[0][1].action)
        assert isinstance(again, Reply) and first[lang] not in again.text


async def test_limit_and_quiet_without_argument_show_the_current_value(
    engine: AsyncEngine,
) -> None:
    """`limit` and `quiet` alone show the current value and how to change it, as `mode`,
    `time` and `lang` do; nothing changes (item 18)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    expected = {
        "en": ("no limit", "at most 7", "Quiet hours are off", "Quiet hours: 22:00-07:00 (UTC+9)"),
        "ko": (
            "제한이 없습니다",
            "최대 7개",
            "꺼져 있습니다",
            "방해 금지 시간: 22:00-07:00(UTC+9)",
        ),
    }
    for lang in ("en", "ko"):
        caller = console(f"current-{lang}")
        await core.handle(caller, f"/lang {lang}")
        await core.handle(caller, "/timezone UTC+9")
        no_limit, limit, quiet_off, quiet = expected[lang]
        assert no_limit in (await core.handle(caller, "/limit")).text
        assert quiet_off in (await core.handle(caller, "/quiet")).text
        await core.handle(caller, "/limit 7")
        await core.handle(caller, "/quiet 22:00-07:00")
        assert limit in (await core.handle(caller, "/limit")).text
        assert quiet in (await core.handle(caller, "/quiet")).text
        assert "/limit off" in (await core.handle(caller, "/limit")).text
        record = await stored(engine, f"current-{lang}")
        assert record.chat.limit == 7


async def test_a_bad_weekday_says_nothing_changed_and_korean_days_work(
    engine: AsyncEngine,
) -> None:
    """`mode weekly funday` says nothing was changed; `mode weekly 수` and `수요일` set
    Wednesday (items 18 and 20)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    unchanged = {"en": "Nothing was changed.", "ko": "아무것도 바뀌지 않았습니다."}
    for lang in ("en", "ko"):
        caller = console(f"weekday-{lang}")
        await core.handle(caller, f"/lang {lang}")
        text = (await core.handle(caller, "/mode weekly funday")).text
        assert text.endswith(unchanged[lang]) and "funday" in text
        assert (await stored(engine, f"weekday-{lang}")).chat.mode.value == "daily"
        for day in ("수", "수요일", "wed"):
            await core.handle(caller, "/mode daily")
            await core.handle(caller, f"/mode weekly {day}")
            record = await stored(engine, f"weekday-{lang}")
            assert record.chat.mode.value == "weekly" and record.chat.weekday == 2, day


async def test_an_ambiguous_zone_offers_the_candidates_and_cities_are_known(
    engine: AsyncEngine,
) -> None:
    """`timezone IST` says it is ambiguous and names the zones it may mean; common city
    names work, in Korean too (`서울`, `도쿄`, `뉴욕`) (items 18 and 20)."""
    core = CommandCore(engine=engine, defaults=Defaults())
    ambiguous = {"en": "names more than one time zone", "ko": "시간대가 여러 개입니다"}
    for lang in ("en", "ko"):
        caller = console(f"zone-{lang}")
        await core.handle(caller, f"/lang {lang}")
        text = (await core.handle(caller, "/timezone IST")).text
        assert ambiguous[lang] in text and "Asia/Kolkata" in text and "Europe/Dublin" in text
        assert (await stored(engine, f"zone-{lang}")).chat.timezone == "UTC"
        for typed, zone in (
            ("서울", "Asia/Seoul"),
            ("도쿄", "Asia/Tokyo"),
            ("뉴욕", "America/New_York"),
            ("new york", "America/New_York"),
            ("Tokyo", "Asia/Tokyo"),
        ):
            await core.handle(caller, f"/timezone {typed}")
            assert (await stored(engine, f"zone-{lang}")).chat.timezone == zone, typed


async def test_korean_reads_as_sentences(engine: AsyncEngine) -> None:
    """The filter is a sentence, not stacked colons; a changed zone, an unknown command and
    the help of `import` read as a native editor writes them (item 20)."""
    core = CommandCore(engine=engine, defaults=Defaults(lang="ko"))
    caller = console("korean")
    text = (await core.handle(caller, "/subscribe rl +post-training -robotics")).text
    assert text.startswith(
        "현재 필터: rl 태그가 있고, post-training 태그가 반드시 있으며, robotics 태그는 없는 페이지"
    )
    assert "다음 중 하나:" not in text and "반드시 포함:" not in text
    settings = (await core.handle(caller, "/settings")).text
    assert "필터: rl 태그가 있고," in settings
    zone = (await core.handle(caller, "/timezone 서울")).text
    assert zone.startswith("이 채팅의 시간대를 바꿨습니다: Asia/Seoul.") and "그곳" not in zone
    assert (await core.handle(caller, "/안녕")).text.startswith("“안녕” 명령어는 없습니다.")
    assert "설정줄" not in (await core.handle(caller, "/help import")).text


async def test_the_picker_shows_required_and_excluded_tags_and_keeps_them(
    engine: AsyncEngine,
) -> None:
    """The tag picker marks a required tag ➕ and an excluded one 🚫, not as followed or
    unselected; pressing one changes nothing and says how to change it (item 16)."""
    async with make_feed_client() as http:
        await Poller(
            engine=engine, sources=[str(WIKI)], base_url=None, default_lang="en", http=http
        ).poll()
    core = CommandCore(engine=engine, defaults=Defaults())
    said = {"en": "a tap does not change it", "ko": "눌러도 바뀌지 않습니다"}
    for lang in ("en", "ko"):
        caller = console(f"marks-{lang}")
        await core.handle(caller, f"/lang {lang}")
        await core.handle(caller, "/subscribe rl +post-training -robotics")
        picker = await core.handle(caller, "/subscribe")
        labels = {b.action.removeprefix("tog:"): b.label for row in picker.buttons for b in row}
        assert labels["rl"].startswith("✅ ")
        assert labels["post-training"].startswith("➕ ")
        assert labels["robotics"].startswith("🚫 ")
        before = (await stored(engine, caller.chat_id)).chat.filter
        for tag in ("post-training", "robotics"):
            pressed = await core.handle_action(caller, f"tog:{tag}")
            assert isinstance(pressed, Reply) and said[lang] in pressed.text
            assert (await stored(engine, caller.chat_id)).chat.filter == before


WHY_KO = {
    "baseline": "첫 스캔 때 이미 위키에 있던 페이지라서 건너뛰었습니다.",
    "before": "이 채팅이 구독하기 전에 올라온 페이지라서 건너뛰었습니다",
    "pending": "에 보낼 다음 요약에 담깁니다.",
    "queued": "발송 대기 중입니다.",
    "sent": "요약에 담아 ",
    "failed": "발송에 실패했습니다. 사유: Forbidden: bot was blocked",
    "both": (
        "제외한 robotics 태그가 있고, 반드시 있어야 하는 vision 태그가 없어서 필터에 맞지 않습니다."
    ),
    "none": "구독한 nlp 태그가 하나도 없어서 필터에 맞지 않습니다.",
    "paused": "발송이 일시 중지되어 있어서 보내지 않았습니다. /resume 명령어로 다시 시작하세요.",
    "left_out": "페이지 수 제한 때문에 ",
}


async def test_why_reads_as_sentences_in_both_languages_for_every_outcome(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """`why` on the console, for each thing that can happen to a page: every line is a
    sentence said once, no placeholder or label is left in it, and the Korean says the
    tags in the sentence ("제외한 robotics 태그가 있고, …") rather than after stacked colons."""
    from bot.store import outbox
    from tests.integration.test_planner import started

    world = await started(engine, tmp_path)
    core = CommandCore(engine=engine, defaults=Defaults(), digests=world.planner)
    said: dict[str, dict[str, str]] = {"en": {}, "ko": {}}

    async def why(lang: str, name: str, chat: str, page: str) -> None:
        said[lang][name] = (await core.handle(console(f"{chat}-{lang}"), f"/why {page}")).text

    async def rows_of(chat_id: str) -> list[int]:
        record = await stored(engine, chat_id)
        async with engine.connect() as conn:
            found = await conn.execute(
                select(outbox_table.c.id)
                .where(outbox_table.c.chat_pk == record.pk)
                .order_by(outbox_table.c.id)
            )
            return [row_id for (row_id,) in found]

    for lang in ("en", "ko"):
        for chat in ("a", "c", "d", "e"):
            await core.handle(console(f"{chat}-{lang}"), f"/lang {lang}")
        await core.handle(console(f"a-{lang}"), "/subscribe rl")
        await why(lang, "baseline", "a", "p/old")
    await world.publish("p/before", tags="[rl]")
    for lang in ("en", "ko"):
        await core.handle(console(f"b-{lang}"), f"/lang {lang}")  # a chat new since p/before
        await core.handle(console(f"b-{lang}"), "/subscribe rl")
        await core.handle(console(f"c-{lang}"), "/subscribe rl -robotics +vision")
        await core.handle(console(f"d-{lang}"), "/subscribe nlp")
        await core.handle(console(f"e-{lang}"), "/subscribe rl")
        await core.handle(console(f"e-{lang}"), "/pause")
        await why(lang, "before", "b", "p/before")
    await world.publish("p/a", tags="[rl]")
    await world.publish("p/robot", tags="[rl, robotics]")
    for lang in ("en", "ko"):
        await why(lang, "pending", "b", "p/a")
        await why(lang, "both", "c", "p/robot")
        await why(lang, "none", "d", "p/robot")
        await why(lang, "paused", "e", "p/a")
    assert await world.plan() >= 2
    for lang in ("en", "ko"):
        await why(lang, "queued", "b", "p/a")
        [row_id] = await rows_of(f"b-{lang}")
        async with engine.begin() as conn:
            await outbox.sent(conn, row_id=row_id, now=dt.datetime(2026, 12, 3, 9, 0))
        await why(lang, "sent", "b", "p/a")
        async with engine.begin() as conn:
            await outbox.fail(conn, row_id=row_id, error="Forbidden: bot was blocked", attempts=1)
        await why(lang, "failed", "b", "p/a")
        await core.handle(console(f"a-{lang}"), "/limit 1")
    await world.publish("p/x", tags="[rl]")
    await world.publish("p/y", tags="[rl]")
    assert await world.plan() >= 2
    for lang in ("en", "ko"):
        await why(lang, "left_out", "a", "p/y")  # p/x and p/y tie; p/x comes first

    for lang in ("en", "ko"):
        for name, text in said[lang].items():
            lines = text.splitlines()
            assert len(lines) == len(set(lines)), (lang, name, text)  # no line said twice
            assert not {"{", "}"} & set(text), (lang, name, text)  # no placeholder left
            assert "외 N개" not in text and "“외" not in text, (lang, name, text)
            for line in lines[2:]:  # after the title and the source, sentences
                # A sentence, but for the platform's own error quoted after "failed:".
                assert line.endswith(".") or name == "failed", (lang, name, line)
                ours = line.replace("Forbidden: bot was blocked", "")  # the platform's words
                assert ours.count(": ") <= 1, (lang, name, line)  # no stacked colons
        assert said["en"].keys() == said["ko"].keys()
    for name, sentence in WHY_KO.items():
        assert sentence in said["ko"][name], (name, said["ko"][name])
    for text in said["ko"].values():
        assert "일치한 태그:" not in text and "건너뜀:" not in text and "보내지 않음:" not in text
    assert "no page, or" not in said["en"]["left_out"]
    assert "Your filter leaves it out" in said["en"]["both"]
    assert said["ko"]["left_out"].count("요약") == 1
