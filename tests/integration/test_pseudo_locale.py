"""A pseudo-language: every message of the English catalogue between ⟦ and ⟧ and 40% longer,
its placeholders kept, installed as a language of its own for these tests.

Every command's replies in it, from the command core (what the console shows) and through
the Telegram and Slack renderers, prove two things: no user-facing text is written inline
(whatever a reply says outside the markers is a value: a tag, a page, a time, what the user
typed), and nothing breaks when a translation is longer than the English (Telegram's 4096
characters a message, Slack's Block Kit limits).
"""

from __future__ import annotations

import datetime as dt
import html
import math
import re
import string
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import i18n
from bot.channels.slack import blocks as slack_render
from bot.channels.slack.payload import payload as slack_payload
from bot.channels.telegram import html as telegram_render
from bot.channels.telegram.payload import payload as telegram_payload
from bot.commands import Caller, CommandCore, Defaults, registry
from bot.commands.operator import Admin
from bot.matching.planner import Planner
from bot.models import Digest, Outgoing, Platform, Reply, Toast
from bot.render import digest_messages, reply_messages
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store import current
from bot.store import pages as page_store
from tests.conftest import Settings
from tests.fakes.slack_api import block_problems
from tests.fakes.telegram_api import _check_markup, _parse_html, _utf16_len

PSEUDO = "qps-ploc"  # a private-use language tag, as pseudo-locales are named
OPEN, CLOSE, PAD = "⟦", "⟧", "·"
GROWTH = 0.4
WIKI = Path(__file__).resolve().parents[2] / "bot" / "sample_wiki"
DATE_KEYS = ("render.date_format",)  # CLDR patterns: the markers go in as quoted literals


def pseudo_text(template: str) -> str:
    """``template`` between the markers, padded to 40% longer, placeholders kept."""
    out: list[str] = []
    length = 0
    for literal, field, spec, conversion in string.Formatter().parse(template):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        length += len(literal)
        if field is not None:
            out.append(
                "{"
                + field
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
    return OPEN + "".join(out) + PAD * math.ceil(GROWTH * max(length, 1)) + CLOSE


def pseudo_catalogue() -> dict[str, i18n.Message]:
    out: dict[str, i18n.Message] = {}
    for key, message in i18n.CATALOGUE[i18n.SOURCE].items():
        if key in DATE_KEYS:
            assert isinstance(message, str)
            out[key] = f"'{OPEN}'{message}'{CLOSE}'"
        elif isinstance(message, dict):
            out[key] = {form: pseudo_text(text) for form, text in message.items()}
        else:
            out[key] = pseudo_text(message)
    return out


@pytest.fixture
def pseudo() -> Iterator[str]:
    i18n.add_language(PSEUDO, pseudo_catalogue())
    try:
        yield PSEUDO
    finally:
        i18n.remove_language(PSEUDO)


_MARKED = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")
_WORD = re.compile(r"[^\W\d_]{2,}")


def unmarked(text: str) -> str:
    """``text`` without its marked spans (innermost first: a message substitutes others)."""
    while True:
        stripped = _MARKED.sub(" ", text)
        if stripped == text:
            return text
        text = stripped


def words(*texts: str) -> set[str]:
    return {w.lower() for text in texts for w in _WORD.findall(text)}


def inline_words(text: str, values: set[str]) -> set[str]:
    """The words of ``text`` outside every marked span that are not values."""
    assert text.count(OPEN) == text.count(CLOSE), text
    return words(unmarked(text)) - values


WIKI_VALUES: set[str] = set()  # the wiki's tags and titles, filled by the ``core`` fixture


def reply_values(reply: Reply, sent: str) -> set[str]:
    """What a reply may say in no language: what was typed, the wiki's tags and titles, and
    its pages' own words."""
    found = words(sent, PSEUDO, "UTC", *(c.name for c in registry.commands())) | WIKI_VALUES
    # The export line is a format, not a sentence: the same in every language.
    found |= words(*(line for line in reply.text.splitlines() if line.startswith("trendbot:")))
    for item in reply.items:
        page = item.page
        found |= words(page.key, page.url or "", page.source, *page.tags)
        for text in page.texts:
            found |= words(text.title, text.tldr)
    for lang in i18n.LANGUAGES:  # language names come from CLDR
        found |= words(i18n.language_name(lang, PSEUDO))
    return found


def commands_to_send() -> list[str]:
    """Every command bare, with its help, and with arguments right and wrong."""
    sent = ["/start", "/help", "hello", "/frobnicate", "/subscrib rl"]
    for command in registry.commands():
        sent += [f"/{command.name}", f"/help {command.name}"]
    sent += [
        "/subscribe rl reasoning +post-training -robotics",
        "/subscribe +",
        "/subscribe bad!tag",
        "/subscribe nosuchtagyet",
        "/unsubscribe robotics",
        "/unsubscribe nosuch",
        "/mode weekly fri",
        "/mode instant",
        "/mode daily",
        "/mode hourly",
        "/time 07:30",
        "/time 25:00",
        "/timezone Asia/Seoul",
        "/timezone IST",
        "/timezone Mars/Olympus",
        "/lang xx",
        f"/lang {PSEUDO}",
        "/latest 3",
        "/latest 99",
        "/limit 2",
        "/limit 0",
        "/quiet 22:00-07:00",
        "/quiet soon",
        "/why 2608.27351",
        "/why papers/nothing-here",
        "/feedback reset",
        "/export",
        '/import trendbot:1 filter="rl" mode=daily time=09:00 tz=UTC',
        "/import nonsense",
        "/broadcast --tag rl The digest moves to 10:00 tomorrow.",
        "/broadcast --lang zz hello",
        "/stats",
        "/alerts on",
        "/alerts off",
        "/pause",
        "/pause",
        "/digest",
        "/resume",
        "/resume",
        "/digest",
        "/unsubscribe all",
        "/unsubscribe all",
        "/latest",
        "/digest",
    ]
    return sent


def check_telegram(reply: Reply, values: set[str]) -> None:
    parts = reply_messages(Platform.TELEGRAM, reply)
    assert parts
    plain = []
    for part in parts:
        text, _ = _parse_html(part.text)
        assert 0 < _utf16_len(text) <= telegram_render.MAX_MESSAGE_CHARS
        _check_markup(telegram_payload(part).markup)
        plain.append(text)
    assert inline_words("\n".join(plain), values) == set(), plain


_SLACK_LINK = re.compile(r"<[^|>]*\|([^>]*)>|<([^>]*)>")


def slack_texts(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "text" and isinstance(value, str):
                yield html.unescape(_SLACK_LINK.sub(lambda m: m.group(1) or m.group(2), value))
            elif key not in ("action_id", "value", "url", "block_id", "image_url"):
                yield from slack_texts(value)
    elif isinstance(node, list | tuple):
        for value in node:
            yield from slack_texts(value)


def check_slack(outgoing: list[Outgoing], values: set[str]) -> None:
    for message in outgoing:
        blocks = list(slack_payload(message).blocks)
        assert 0 < slack_render.block_count(blocks) <= slack_render.MAX_BLOCKS
        assert block_problems(blocks) == [], blocks
        assert len(message.text) <= slack_render.MAX_FALLBACK_TEXT
        assert inline_words("\n".join(slack_texts(blocks)), values) == set()


@pytest.fixture
async def core(engine: AsyncEngine, pseudo: str) -> AsyncIterator[CommandCore]:
    async with make_feed_client() as http:
        await Poller(
            engine=engine,
            sources=[str(WIKI)],
            base_url="https://wiki.example",
            default_lang="en",
            http=http,
        ).poll()
    async with engine.connect() as conn:
        tags = [tag for tag, _ in await current.tag_counts(conn)]
        ids = await current.newest_page_ids(conn, limit=1000)
        stored = await page_store.load_pages(conn, ids)
    WIKI_VALUES.clear()
    WIKI_VALUES.update(words(*tags, *(text.title for p in stored.values() for text in p.texts)))
    settings = Settings(_env_file=None, telegram_admin_ids=(1,))  # type: ignore[call-arg]
    yield CommandCore(
        engine=engine,
        defaults=Defaults(lang=pseudo),
        digests=Planner(engine=engine),
        admin=Admin(engine=engine, settings=settings),
        public_base_url="https://bot.example",
    )


async def test_every_reply_is_in_the_catalogue_and_fits_when_40_percent_longer(
    core: CommandCore,
) -> None:
    callers = [
        Caller(platform=Platform.CONSOLE, chat_id="c1", user_id="u1"),
        Caller(platform=Platform.TELEGRAM, chat_id="1", user_id="1"),
        Caller(platform=Platform.SLACK, chat_id="D1", user_id="U1", workspace="T1"),
    ]
    seen = 0
    for caller in callers:
        for sent in commands_to_send():
            reply = await core.handle(caller, sent)
            assert reply.lang == PSEUDO, (sent, reply)
            values = reply_values(reply, sent)
            texts = [reply.text, *(b.label for row in reply.buttons for b in row)]
            if reply.chart is not None:
                texts.append(reply.chart.alt)
            for text in texts:
                assert inline_words(text, values) == set(), (sent, text)
            check_telegram(reply, values)
            check_slack(reply_messages(Platform.SLACK, reply), values)
            for row in reply.buttons:
                for button in row:
                    pressed = await core.handle_action(caller, button.action)
                    if isinstance(pressed, Reply | Toast):
                        assert inline_words(pressed.text, values) == set(), (button, pressed)
            seen += 1
    assert seen > 3 * len(registry.commands())


async def test_digests_render_within_the_limits_when_40_percent_longer(core: CommandCore) -> None:
    caller = Caller(platform=Platform.CONSOLE, chat_id="d1", user_id="u1")
    await core.handle(caller, "/subscribe *")
    latest = await core.handle(caller, "/latest 20")
    assert latest.items
    values = reply_values(latest, "")
    for instant, more in ((False, 0), (False, 7), (True, 0)):
        items = latest.items[:1] if instant else latest.items
        digest = Digest(
            lang=PSEUDO, date=dt.date(2026, 12, 3), items=items, instant=instant, more=more
        )
        for part in digest_messages(Platform.TELEGRAM, digest):
            text, _ = _parse_html(part.text)
            assert 0 < _utf16_len(text) <= telegram_render.MAX_MESSAGE_CHARS
            assert inline_words(text, values) == set(), text
        check_slack(digest_messages(Platform.SLACK, digest), values)  # type: ignore[arg-type]
