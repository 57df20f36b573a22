"""The command core as a table: what a chat types -> what it is answered and what it keeps.

One core on a real SQLite file (no channel): each row types its commands into a new chat
and checks the last reply, then the chat's settings. Platform behaviour is the channels'
tests' business; this is where the commands' own rules are learnt.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import Caller, CommandCore, Defaults
from bot.i18n import t
from bot.models import ChatState, Filter, Platform
from bot.store import chats as chat_store
from bot.store.engine import create_engine, reader, upgrade
from tests.scratch import scratch_database


@dataclass(frozen=True)
class Row:
    name: str
    commands: tuple[str, ...]
    says: tuple[str, ...]  # all of these are in the last reply
    filter: Filter | None = None  # the chat's filter afterwards, when given
    lang: str | None = None  # the chat's language afterwards, when given
    state: ChatState | None = None
    language_code: str | None = None  # the user's platform language


TABLE = [
    Row(
        "subscribe adds any-of tags",
        ("/subscribe rl reasoning",),
        ("any of reasoning, rl",),
        filter=Filter(any_of=frozenset({"rl", "reasoning"})),
    ),
    Row(
        "a Korean tag is a tag",
        ("/subscribe 강화학습",),
        ("강화학습",),
        filter=Filter(any_of=frozenset({"강화학습"})),
    ),
    Row(
        "tags are folded: one tag whatever the case or width",
        ("/subscribe RL ＲＬ",),
        ("rl",),
        filter=Filter(any_of=frozenset({"rl"})),
    ),
    Row(
        "a bare tag keeps a required one required, and says so",
        ("/subscribe rl +post-training", "/subscribe Post-Training"),
        (
            "any of rl; must have post-training",
            t("en", "subscribe.kept_required", tag="post-training", p="/"),
        ),
        filter=Filter(any_of=frozenset({"rl"}), required=frozenset({"post-training"})),
    ),
    Row(
        "in Korean too",
        ("/lang ko", "/subscribe rl +post-training", "/subscribe Post-Training"),
        (t("ko", "subscribe.kept_required", tag="post-training", p="/"),),
        filter=Filter(any_of=frozenset({"rl"}), required=frozenset({"post-training"})),
    ),
    Row(
        "+ requires, - excludes",
        ("/subscribe rl +reasoning -robotics",),
        ("any of rl; must have reasoning; never robotics",),
        filter=Filter(
            any_of=frozenset({"rl"}),
            required=frozenset({"reasoning"}),
            excluded=frozenset({"robotics"}),
        ),
    ),
    Row(
        "a malformed tag changes nothing and says why",
        ("/subscribe rl", "/subscribe ok bad/tag"),
        (t("en", "filter.error.bad_chars", item="bad/tag"),),
        filter=Filter(any_of=frozenset({"rl"})),
    ),
    Row(
        "a bare sign",
        ("/subscribe +",),
        (t("en", "filter.error.bare_sign", item="+"),),
        filter=Filter(),
    ),
    Row(
        "unsubscribe all",
        ("/subscribe rl", "/unsubscribe all"),
        (t("en", "unsubscribe.all", p="/"),),
        filter=Filter(),
    ),
    Row(
        "unsubscribe a tag not followed",
        ("/unsubscribe rl",),
        (t("en", "filter.not_subscribed", tags="rl"),),
    ),
    Row(
        "unsubscribe all with nothing followed",
        ("/unsubscribe all",),
        (t("en", "unsubscribe.nothing", p="/"),),
    ),
    Row("pause", ("/pause",), (t("en", "pause.done", p="/"),), state=ChatState.PAUSED),
    Row(
        "pause twice",
        ("/pause", "/pause"),
        (t("en", "pause.already", p="/"),),
        state=ChatState.PAUSED,
    ),
    Row(
        "resume after pause",
        ("/pause", "/resume"),
        (t("en", "resume.done"),),
        state=ChatState.ACTIVE,
    ),
    Row("resume when on", ("/resume",), (t("en", "resume.already"),), state=ChatState.ACTIVE),
    Row("lang ko", ("/lang ko",), (t("ko", "lang.set"),), lang="ko"),
    Row(
        "a Korean user's new chat starts in Korean",
        ("/settings",),
        (),
        lang="ko",
        language_code="ko-KR",
    ),
    Row("an English user's new chat starts in English", ("/settings",), (), lang="en"),
    Row(
        "an unknown command",
        ("/frobnicate",),
        (t("en", "cmd.unknown", command="frobnicate", p="/"),),
    ),
    Row(
        "a near miss gets a suggestion",
        ("/subscibe rl",),
        (t("en", "cmd.did_you_mean", command="subscibe", suggestion="subscribe", p="/"),),
        filter=Filter(),
    ),
    Row("too long for a command", ("/subscribe " + "a" * 5000,), (t("en", "cmd.too_long"),)),
]


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A migrated SQLite file (the store's behaviour on both backends is the integration
    tests' business)."""
    async with scratch_database(None, directory=tmp_path) as url:
        engine = create_engine(url)
        await upgrade(engine)
        try:
            yield engine
        finally:
            await engine.dispose()


@pytest.fixture
def core(engine: AsyncEngine) -> CommandCore:
    return CommandCore(engine=engine, defaults=Defaults())


async def _record(engine: AsyncEngine, chat_id: str) -> chat_store.ChatRecord | None:
    async with reader(engine).connect() as conn:
        return await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=chat_id)


@pytest.mark.parametrize("row", TABLE, ids=[row.name for row in TABLE])
async def test_command(core: CommandCore, engine: AsyncEngine, row: Row) -> None:
    caller = Caller(
        platform=Platform.TELEGRAM, chat_id="42", user_id="7", language_code=row.language_code
    )
    reply = None
    for text in row.commands:
        reply = await core.handle(caller, text)
    assert reply is not None
    for expected in row.says:
        assert expected in reply.text
    record = await _record(engine, "42")
    assert record is not None
    if row.filter is not None:
        assert record.chat.filter == row.filter
    if row.lang is not None:
        assert record.chat.lang == row.lang
    if row.state is not None:
        assert record.chat.state == row.state


async def test_removed_from_chat_makes_it_and_its_topics_inactive(
    core: CommandCore, engine: AsyncEngine
) -> None:
    for chat_id in ("-100123", "-100123/45", "-100999"):
        await core.handle(
            Caller(platform=Platform.TELEGRAM, chat_id=chat_id, user_id="7"), "/subscribe rl"
        )
    assert await core.removed_from_chat(platform=Platform.TELEGRAM, chat_id="-100123") == 2
    states = [(await _record(engine, c)) for c in ("-100123", "-100123/45", "-100999")]
    assert [r.chat.state for r in states if r] == [
        ChatState.INACTIVE,
        ChatState.INACTIVE,
        ChatState.ACTIVE,
    ]
    assert await core.removed_from_chat(platform=Platform.TELEGRAM, chat_id="-1") == 0


async def test_chat_moved_keeps_its_subscription(core: CommandCore, engine: AsyncEngine) -> None:
    await core.handle(
        Caller(platform=Platform.TELEGRAM, chat_id="-5", user_id="7"), "/subscribe rl"
    )
    assert await core.chat_moved(platform=Platform.TELEGRAM, old_chat_id="-5", new_chat_id="-1005")
    moved = await _record(engine, "-1005")
    assert moved is not None and moved.chat.filter == Filter(any_of=frozenset({"rl"}))
    assert await _record(engine, "-5") is None
    assert not await core.chat_moved(platform=Platform.TELEGRAM, old_chat_id="-5", new_chat_id="-9")


def test_a_star_filter_reads_as_one_phrase_in_both_languages() -> None:
    """With *, English goes on after commas; Korean puts what is first and what is left
    out in brackets after "모든 페이지", never as a list of clauses after commas."""
    from bot.commands import describe_filter
    from bot.rules.filters import parse_filter

    star = parse_filter("* rl +post-training -robotics")
    assert describe_filter(star, lang="en") == (
        "every page that has post-training, those with rl first, except robotics"
    )
    assert describe_filter(star, lang="ko") == (
        "post-training 태그가 있는 모든 페이지(rl 태그가 있는 페이지 우선, "
        "robotics 태그가 있는 페이지 제외)"
    )
    assert describe_filter(parse_filter("*"), lang="ko") == "모든 페이지"
    assert describe_filter(parse_filter("* -robotics"), lang="en") == "every page, except robotics"
