"""The export line and the JSON lines of ``trendbot export``: written, read back, and every
malformed input refused with the reason."""

from __future__ import annotations

import datetime as dt
import json
import zoneinfo
from dataclasses import fields, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import TransferError
from bot.matching import transfer
from bot.models import ChatKind, ChatSettings, ChatState, Filter, Mode, Platform, QuietHours
from bot.store import chats as chat_store

CHAT = ChatSettings(platform=Platform.TELEGRAM, chat_id="1001")
LINE = 'trendbot:1 filter="rl +post-training -robotics" mode=daily time=09:00 tz=Asia/Seoul lang=ko'


def test_the_contract_line() -> None:
    chat = ChatSettings(
        platform=Platform.TELEGRAM,
        chat_id="1",
        filter=Filter(
            any_of=frozenset({"rl"}),
            required=frozenset({"post-training"}),
            excluded=frozenset({"robotics"}),
        ),
        timezone="Asia/Seoul",
        lang="ko",
    )
    assert transfer.export_line(chat) == LINE
    assert transfer.import_line(CHAT, LINE) == replace(chat, chat_id="1001")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("trendbot:1 filter=rl mode=instant time=7:30 tz=UTC lang=en", None),
        ("trendbot:1 filter=rl mode=instant time=07:30 tz=UTC lang=en", dt.time(7, 30)),
        ('  trendbot:1   lang=en tz=UTC time=23:59 mode=daily filter="*"  ', dt.time(23, 59)),
        ("trendbot:1 filter=“rl -x” mode=daily time=00:00 tz=UTC lang=en", dt.time(0, 0)),
        ('trendbot:1 filter="" mode=daily time=00:00 tz=UTC lang=en', dt.time(0, 0)),
    ],
)
def test_lines_that_read(line: str, expected: dt.time | None) -> None:
    if expected is None:
        with pytest.raises(TransferError) as caught:
            transfer.parse_line(line)
        assert (caught.value.reason, caught.value.field) == ("bad_value", "time")
    else:
        assert transfer.parse_line(line)["time"] == expected


GOOD = "filter=rl mode=daily time=09:00 tz=UTC lang=en"


@pytest.mark.parametrize(
    ("line", "reason", "field"),
    [
        ("", "empty", ""),
        ("   ", "empty", ""),
        ("x" * 5000, "too_long", ""),
        (f"trendbot:2 {GOOD}", "header", "trendbot:2"),
        (GOOD, "header", "filter=rl"),
        (f"trendbot:1{GOOD}", "header", f"trendbot:1{GOOD.split()[0]}"),
        ("trendbot:1 filter=rl mode=daily time=09:00 tz=UTC", "missing_field", "lang"),
        ("trendbot:1", "missing_field", "filter"),
        (f"trendbot:1 {GOOD} lang=ko", "duplicate_field", "lang"),
        (f"trendbot:1 {GOOD} colour=red", "unknown_field", "colour"),
        (f"trendbot:1 {GOOD} quiet", "syntax", "quiet"),
        (f"trendbot:1 {GOOD} =x", "syntax", "=x"),
        ('trendbot:1 filter="rl mode=daily time=09:00 tz=UTC lang=en', "syntax", "filter"),
        ('trendbot:1 filter="rl"x mode=daily time=09:00 tz=UTC lang=en', "syntax", "filter"),
        ('trendbot:1 filter=r"l mode=daily time=09:00 tz=UTC lang=en', "syntax", "filter"),
        ("trendbot:1 filter=r\\l mode=daily time=09:00 tz=UTC lang=en", "syntax", "filter"),
        ("trendbot:1 filter=+ mode=daily time=09:00 tz=UTC lang=en", "bad_value", "filter"),
        ('trendbot:1 filter="rl <b>" mode=daily time=09:00 tz=UTC lang=en', "bad_value", "filter"),
        ("trendbot:1 filter=rl mode=hourly time=09:00 tz=UTC lang=en", "bad_value", "mode"),
        ("trendbot:1 filter=rl mode=daily time=24:00 tz=UTC lang=en", "bad_value", "time"),
        ("trendbot:1 filter=rl mode=daily time=09:60 tz=UTC lang=en", "bad_value", "time"),
        ("trendbot:1 filter=rl mode=daily time=09:00 tz=Mars/Base lang=en", "bad_value", "tz"),
        ("trendbot:1 filter=rl mode=daily time=09:00 tz=../etc lang=en", "bad_value", "tz"),
        ("trendbot:1 filter=rl mode=daily time=09:00 tz=UTC lang=fr", "bad_value", "lang"),
        (
            "trendbot:1 filter=rl mode=weekly time=09:00 tz=UTC lang=en day=funday",
            "bad_value",
            "day",
        ),
        (
            "trendbot:1 filter=rl mode=daily time=09:00 tz=UTC lang=en quiet=22:00",
            "bad_value",
            "quiet",
        ),
        (
            "trendbot:1 filter=rl mode=daily time=09:00 tz=UTC lang=en quiet=07:00-07:00",
            "bad_value",
            "quiet",
        ),
        ("trendbot:1 filter=rl mode=daily time=09:00 tz=UTC lang=en limit=0", "bad_value", "limit"),
        (
            "trendbot:1 filter=rl mode=daily time=09:00 tz=UTC lang=en limit=51",
            "bad_value",
            "limit",
        ),
    ],
)
def test_malformed_lines_say_what_is_wrong(line: str, reason: str, field: str) -> None:
    with pytest.raises(TransferError) as caught:
        transfer.import_line(CHAT, line)
    assert caught.value.reason == reason
    assert caught.value.field == field
    assert transfer.describe_error(caught.value)


def test_a_weekly_chat_with_quiet_hours_and_a_limit_travels_whole() -> None:
    line = (
        "trendbot:1 filter=rl mode=weekly time=07:30 tz=UTC lang=en"
        " day=fri quiet=22:00-07:00 limit=10"
    )
    moved = transfer.import_line(CHAT, line)
    assert moved.mode == Mode.WEEKLY and moved.weekday == 4 and moved.limit == 10
    assert str(moved.quiet) == "22:00-07:00"
    assert transfer.export_line(moved) == line


def test_too_many_tags_is_a_bad_filter() -> None:
    tags = " ".join(f"t{i}" for i in range(51))
    with pytest.raises(TransferError) as caught:
        transfer.parse_line(f'trendbot:1 filter="{tags}" mode=daily time=09:00 tz=UTC lang=en')
    assert (caught.value.reason, caught.value.field) == ("bad_value", "filter")


TAG = st.from_regex(r"[a-z0-9가-힣][a-z0-9가-힣._-]{0,15}", fullmatch=True)
ZONES = sorted(zoneinfo.available_timezones())


@st.composite
def chats(draw: st.DrawFn) -> ChatSettings:
    tags = draw(st.lists(TAG, unique=True, max_size=12))
    buckets = [draw(st.sampled_from(("any", "required", "excluded"))) for _ in tags]
    chosen = {
        b: frozenset(t for t, k in zip(tags, buckets, strict=True) if k == b) for b in buckets
    }
    return ChatSettings(
        platform=draw(st.sampled_from(list(Platform))),
        chat_id=draw(st.from_regex(r"-?[0-9A-Z]{1,20}", fullmatch=True)),
        kind=draw(st.sampled_from(list(ChatKind))),
        state=draw(st.sampled_from(list(ChatState))),
        mode=(mode := draw(st.sampled_from(list(Mode)))),
        digest_time=draw(st.times()).replace(second=0, microsecond=0),
        timezone=draw(st.sampled_from(ZONES)),
        lang=draw(st.sampled_from(("en", "ko"))),
        filter=Filter(
            any_of=chosen.get("any", frozenset()),
            required=chosen.get("required", frozenset()),
            excluded=chosen.get("excluded", frozenset()),
            everything=draw(st.booleans()),
        ),
        # The day matters (and travels) only in weekly mode; elsewhere it is Monday's default.
        weekday=draw(st.integers(0, 6)) if mode == Mode.WEEKLY else 0,
        quiet=draw(st.none() | quiet_hours()),
        limit=draw(st.none() | st.integers(1, 50)),
    )


@st.composite
def quiet_hours(draw: st.DrawFn) -> QuietHours:
    start = draw(st.times()).replace(second=0, microsecond=0)
    end = draw(
        st.times().map(lambda t: t.replace(second=0, microsecond=0)).filter(lambda t: t != start)
    )
    return QuietHours(start, end)


@settings(max_examples=300, deadline=None)
@given(chat=chats(), other=chats())
def test_export_then_import_is_lossless(chat: ChatSettings, other: ChatSettings) -> None:
    """Importing a chat's line into any other chat gives it every setting of the first,
    and keeps what the line does not carry (where the chat is, its kind and state)."""
    moved = transfer.import_line(other, transfer.export_line(chat))
    kept = ("platform", "chat_id", "kind", "state")
    for name in (f.name for f in fields(ChatSettings)):
        source = other if name in kept else chat
        assert getattr(moved, name) == getattr(source, name), name
    # The JSON line of `trendbot export` carries the rest.
    entry = transfer.parse_record(json.dumps(transfer.export_record(chat)))
    assert entry.settings() == chat


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_read_or_refused_with_a_reason(text: str) -> None:
    for line in (text, f"trendbot:1 {text}", f"trendbot:1 {GOOD} {text}"):
        try:
            transfer.parse_line(line)
        except TransferError as exc:
            assert exc.reason in {
                "empty",
                "too_long",
                "header",
                "syntax",
                "unknown_field",
                "duplicate_field",
                "missing_field",
                "bad_value",
            }


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("", "json"),
        ("[1]", "json"),
        ("{", "json"),
        ('"x"', "json"),
        ("[" * 100_000, "json"),
        ('{"chat": "telegram:1", "settings": 5}', "missing_field"),
        ('{"chat": "telegram:1"}', "missing_field"),
        ('{"chat": "irc:1", "settings": ""}', "chat"),
        ('{"chat": "telegram:", "settings": ""}', "chat"),
        ('{"chat": "telegram:a b", "settings": ""}', "chat"),
        ('{"chat": 5, "settings": ""}', "chat"),
        ('{"chat": "telegram:1", "kind": "channel", "settings": ""}', "kind"),
        ('{"chat": "telegram:1", "state": ["x"], "settings": ""}', "state"),
        ('{"chat": "telegram:1", "owner": "me", "settings": ""}', "unknown_field"),
        ('{"chat": "telegram:1", "settings": "trendbot:1"}', "missing_field"),
    ],
)
def test_malformed_json_lines(line: str, reason: str) -> None:
    with pytest.raises(TransferError) as caught:
        transfer.parse_record(line)
    assert caught.value.reason == reason
    assert transfer.describe_error(caught.value)


def test_a_json_line_without_kind_and_state_is_an_active_private_chat() -> None:
    entry = transfer.parse_record(json.dumps({"chat": "slack:D0123", "settings": LINE}))
    assert (entry.platform, entry.chat_id, entry.kind, entry.state) == (
        Platform.SLACK,
        "D0123",
        ChatKind.PRIVATE,
        ChatState.ACTIVE,
    )
    assert entry.settings().timezone == "Asia/Seoul"


def test_an_offset_zone_is_written_as_people_write_it() -> None:
    """Etc/GMT-9 is exported as tz=UTC+9 (in the chat line and in the CLI's JSON, and so
    in `subscribers`), and reads back as the same zone."""
    chat = replace(CHAT, timezone="Etc/GMT-9")
    line = transfer.export_line(chat)
    assert "tz=UTC+9" in line
    assert "UTC+9" in transfer.export_record(chat)["settings"]
    assert transfer.import_line(CHAT, line).timezone == "Etc/GMT-9"
    assert (
        chat_store.describe(chat_store.ChatRecord(pk=1, chat=chat, cursor=0, next_digest_at=None))[
            "tz"
        ]
        == "UTC+9"
    )
