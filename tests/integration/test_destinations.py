"""Destinations end to end: the private feed, export/import and operator alerts, through
python-telegram-bot and Bolt unchanged against the local Bot API and Slack API servers, the
bot's own HTTP server, and a real database on each backend."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp
import feedparser
import pytest
from hypothesis import HealthCheck, given, settings
from multidict import CIMultiDict
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.slack.channel import SlackChannel
from bot.channels.slack.client import make_client
from bot.channels.slack.sender import SlackSender
from bot.channels.slack.spec import EVENTS
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.client import close_bot, make_bot
from bot.channels.telegram.sender import TelegramSender
from bot.commands import Caller, CommandCore, Defaults
from bot.commands.operator import Admin
from bot.delivery.engine import Delivery
from bot.i18n import t
from bot.models import ChatSettings, Page, PageText, Platform
from bot.ops.alert_service import ALERT_PRIORITY, AlertService
from bot.ops.feed_server import FeedServer
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.sources import source_id
from bot.store import alerts as alert_store
from bot.store import chats as chat_store
from bot.store import pages as page_store
from bot.store.engine import create_engine, upgrade
from bot.store.schema import audit_log, chat_feeds, outbox
from bot.util import utcnow
from tests.conftest import Settings
from tests.fakes.slack_api import DEFAULT_TOKEN, FakeSlack, shown_for_command, signed_headers
from tests.fakes.telegram_api import FakeTelegram
from tests.unit.test_feeds import check_atom
from tests.unit.test_transfer import chats as transfer_chats

TG_TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
BASE = "https://bot.example.com/trend"
TG_ADMIN = 4242
TG_USER = 5151
SLACK_ADMIN = "UADMIN1"
SOURCE = "wiki"
FEED_URL = re.compile(r"https://bot\.example\.com/trend/feeds/([A-Za-z0-9_-]{43})\.atom")


def page(key: str, tags: tuple[str, ...], *, day: int, ko: bool = False) -> Page:
    texts = [PageText("en", f"Title {key}", f"TL;DR of {key}.")]
    if ko:
        texts.append(PageText("ko", f"제목 {key}", f"{key} 요약."))
    return Page(
        source=SOURCE,
        key=key,
        texts=tuple(texts),
        tags=tags,
        url=f"https://wiki.example.com/{key}",
        updated=dt.date(2026, 8, day),
    )


async def publish(engine: AsyncEngine, *pages: Page, now: dt.datetime | None = None) -> None:
    async with engine.begin() as conn:
        source = await page_store.source(conn, name=SOURCE, kind="feed")
        await page_store.record_pages(
            conn, source=source, found=pages, present_keys=None, now=now or utcnow()
        )


def make_settings(tg: FakeTelegram | None, sl: FakeSlack | None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"public_base_url": BASE, "wiki_sources": (SOURCE,)}
    if tg is not None:
        values.update(
            telegram_bot_token=TG_TOKEN,
            telegram_api_base_url=tg.base_url,
            telegram_admin_ids=(TG_ADMIN,),
        )
    if sl is not None:
        values.update(
            slack_bot_token=DEFAULT_TOKEN,
            slack_signing_secret=SECRET,
            slack_api_base_url=sl.base_url,
            slack_admin_ids=(SLACK_ADMIN,),
        )
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class Bot:
    """Telegram and Slack channels on one command core, the HTTP server, and delivery."""

    engine: AsyncEngine
    settings: Settings
    tg: FakeTelegram | None
    sl: FakeSlack | None
    http: aiohttp.ClientSession
    base: str  # the HTTP server's own address
    alerts: AlertService
    senders: dict[Platform, Any]
    now: list[dt.datetime]

    async def say(self, chat_id: int, text: str, **kwargs: Any) -> str:
        """A Telegram message from a user; the bot's reply."""
        assert self.tg is not None
        seen = len(self.tg.messages_to(chat_id))
        self.tg.message(chat_id, text, **kwargs)
        await self.tg.wait_for(
            lambda c: c.method == "sendMessage" and c.chat_id == chat_id, count=seen + 1
        )
        return str(self.tg.messages_to(chat_id)[seen]["text"])

    async def trend(self, text: str, *, channel: str, user: str) -> str:
        """``/trend text`` on Slack; what the caller was shown."""
        assert self.sl is not None

        async def post(body: bytes) -> tuple[int, str]:
            headers = signed_headers(SECRET, body)
            async with self.http.post(f"{self.base}/slack/events", data=body, headers=headers) as r:
                return r.status, await r.text()

        _, shown = await shown_for_command(
            self.sl,
            post,
            text,
            response_name=f"r{len(self.sl.responses)}",
            user_id=user,
            channel_id=channel,
        )
        return str(shown["text"])

    async def get(self, path: str, **headers: str) -> tuple[int, CIMultiDict[str], bytes]:
        async with self.http.get(f"{self.base}{path}", headers=headers) as response:
            return response.status, CIMultiDict(response.headers), await response.read()

    async def deliver(self) -> Delivery:
        delivery = Delivery(
            engine=self.engine,
            senders=self.senders,
            concurrency=4,
            on_auth_failure=self.alerts.auth_failed,
        )
        await delivery.drain()
        return delivery


@asynccontextmanager
async def running(
    engine: AsyncEngine,
    *,
    tg: FakeTelegram | None = None,
    sl: FakeSlack | None = None,
    telegram_updates: bool = True,
    **overrides: Any,
) -> AsyncIterator[Bot]:
    """``telegram_updates`` false: Telegram only sends (no channel taking updates)."""
    settings = make_settings(tg, sl, **overrides)
    admin = Admin(engine=engine, settings=settings)
    core = CommandCore(
        engine=engine, defaults=Defaults(), admin=admin, public_base_url=settings.public_base_url
    )
    now = [utcnow()]
    hooks = WebHooks(
        feeds=FeedServer(engine=engine, public_base_url=settings.public_base_url).handle
    )
    stops = []
    senders: dict[Platform, Any] = {}
    slack_client = None
    if tg is not None:
        bot = make_bot(settings)
        if telegram_updates:
            telegram = TelegramChannel(settings=settings, core=core, bot=bot)
            await telegram.start()
            stops.append(telegram.stop)
        senders[Platform.TELEGRAM] = TelegramSender(bot, rate_per_second=1000)
        stops.append(lambda: close_bot(bot))
    if sl is not None:
        slack_client = make_client(settings)
        slack = SlackChannel(settings=settings, core=core, client=slack_client)
        await slack.start()
        hooks.routes[EVENTS] = slack.handle_request
        senders[Platform.SLACK] = SlackSender(slack_client, per_channel_rate=1000)
        stops.append(slack.stop)
    alerts = AlertService(
        engine=engine,
        settings=settings,
        clock=lambda: now[0],
    )
    runner, port = await start_web(make_app(engine=engine, hooks=hooks), host="127.0.0.1", port=0)
    http = aiohttp.ClientSession()
    try:
        yield Bot(engine, settings, tg, sl, http, f"http://127.0.0.1:{port}", alerts, senders, now)
    finally:
        await http.close()
        await runner.cleanup()
        for stop in stops:
            await stop()


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(token=TG_TOKEN, long_poll_cap=0.2) as server:
        yield server


@pytest.fixture
async def sl() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.add_channel("C1", name="general")
        server.add_channel("C2", name="research")
        server.add_channel("DUSER1", user="UUSER1")
        yield server


def feed_path(reply: str) -> str:
    match = FEED_URL.search(reply)
    assert match, reply
    return f"/feeds/{match[1]}.atom"


# ---------------------------------------------------------------------------- the feed


async def test_feed_on_telegram(engine: AsyncEngine, tg: FakeTelegram) -> None:
    await publish(
        engine,
        page("a", ("rl", "reasoning"), day=1, ko=True),
        page("b", ("robotics", "rl"), day=2),
        page("c", ("vision",), day=3),
    )
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_USER, "/subscribe rl reasoning -robotics")
        await bot.say(TG_USER, "/lang ko")
        reply = await bot.say(TG_USER, "/feed")
        path = feed_path(reply)
        assert t("ko", "dest.feed.new", url=BASE + path, p="/") == reply

        status, headers, body = await bot.get(path)
        assert status == 200
        assert headers["Content-Type"] == "application/atom+xml; charset=utf-8"
        assert headers["Cache-Control"].startswith("private")
        check_atom(body)
        parsed = feedparser.parse(body)
        assert not parsed.bozo
        assert [(e.title, e.summary) for e in parsed.entries] == [("제목 a", "a 요약.")]
        assert [tag.term for tag in parsed.entries[0].tags] == ["rl", "reasoning"]
        assert parsed.entries[0].link == "https://wiki.example.com/a"
        assert parsed.feed.links[0].href == BASE + path

        # Conditional GET: the same document is not sent again.
        etag, modified = headers["ETag"], headers["Last-Modified"]
        status, again, body304 = await bot.get(path, **{"If-None-Match": etag})
        assert (status, body304, again["ETag"]) == (304, b"", etag)
        status, _, _ = await bot.get(path, **{"If-Modified-Since": modified})
        assert status == 304
        status, _, _ = await bot.get(path, **{"If-None-Match": '"stale"'})
        assert status == 200
        status, _, head = await bot.get(path, **{"If-None-Match": f'"x", W/{etag}'})
        assert (status, head) == (304, b"")

        # A new matching page changes the document, its validators and Last-Modified.
        # Seen two seconds later (Last-Modified has whole seconds).
        await publish(engine, page("d", ("rl",), day=4), now=utcnow() + dt.timedelta(seconds=2))
        status, headers, body = await bot.get(path, **{"If-None-Match": etag})
        assert status == 200 and headers["ETag"] != etag
        assert [e.title for e in feedparser.parse(body).entries] == ["Title d", "제목 a"]
        status, _, _ = await bot.get(path, **{"If-Modified-Since": modified})
        assert status == 200

        # The address is shown once; `feed reset` gives a new one and the old one is gone.
        assert await bot.say(TG_USER, "/feed") == t("ko", "dest.feed.exists", p="/")
        reset = await bot.say(TG_USER, "/feed reset")
        new_path = feed_path(reset)
        assert new_path != path
        assert (await bot.get(path))[0] == 404
        assert (await bot.get(new_path))[0] == 200
        assert reset == t("ko", "dest.feed.reset", url=BASE + new_path, p="/")
        assert await bot.say(TG_USER, "/feed now") == t("ko", "dest.feed.usage", p="/")


async def test_only_a_hash_of_the_token_is_stored(engine: AsyncEngine, tg: FakeTelegram) -> None:
    async with running(engine, tg=tg) as bot:
        token = FEED_URL.search(await bot.say(TG_USER, "/feed"))[1]  # type: ignore[index]
        async with engine.connect() as conn:
            stored = (await conn.execute(select(chat_feeds.c.token_hash))).scalars().all()
        assert len(stored) == 1 and token not in stored[0] and len(stored[0]) == 64


async def test_malformed_and_unknown_feed_addresses_are_404(
    engine: AsyncEngine, tg: FakeTelegram
) -> None:
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_USER, "/subscribe rl")
        path = feed_path(await bot.say(TG_USER, "/feed"))
        token = path.removeprefix("/feeds/").removesuffix(".atom")
        other = ("A" if token[0] != "A" else "B") + token[1:]
        for bad in (
            f"/feeds/{other}.atom",  # well-formed, unknown
            f"/feeds/{token}",
            f"/feeds/{token}.rss",
            f"/feeds/{token}.atom.atom",
            f"/feeds/{token[:-1]}.atom",
            f"/feeds/{token}%00.atom",
            "/feeds/.atom",
            "/feeds/%2e%2e%2fetc%2fpasswd.atom",
            f"/feeds/{'A' * 4000}.atom",
            "/feeds/' OR 1=1 --.atom",
        ):
            status, _, body = await bot.get(bad)
            assert status == 404, bad
            assert token.encode() not in body
        assert (await bot.get(path))[0] == 200
        status, _, _ = await bot.get(path.upper())
        assert status == 404


async def test_feed_without_public_base_url_says_what_to_set(
    engine: AsyncEngine, tg: FakeTelegram
) -> None:
    async with running(engine, tg=tg, public_base_url=None) as bot:
        reply = await bot.say(TG_USER, "/feed")
        assert reply == t("en", "dest.feed.no_base") and "PUBLIC_BASE_URL" in reply
        async with engine.connect() as conn:
            assert (await conn.execute(select(chat_feeds))).first() is None


async def test_feed_on_slack(engine: AsyncEngine, sl: FakeSlack) -> None:
    await publish(engine, page("a", ("rl",), day=1), page("b", ("cv",), day=2))
    async with running(engine, sl=sl) as bot:
        await bot.trend("subscribe rl", channel="DUSER1", user="UUSER1")
        reply = await bot.trend("feed", channel="DUSER1", user="UUSER1")
        status, _, body = await bot.get(feed_path(reply))
        assert status == 200
        check_atom(body)
        assert [e.title for e in feedparser.parse(body).entries] == ["Title a"]


async def test_a_feed_with_the_database_away_is_503_not_500(tmp_path: Path) -> None:
    missing = create_engine(f"sqlite+aiosqlite:///{tmp_path}/no/such/dir/x.db")
    server = FeedServer(engine=missing, public_base_url=BASE)
    runner, port = await start_web(
        make_app(engine=missing, hooks=WebHooks(feeds=server.handle)), host="127.0.0.1", port=0
    )
    try:
        url = f"http://127.0.0.1:{port}/feeds/{'A' * 43}.atom"
        async with aiohttp.ClientSession() as http, http.get(url) as response:
            assert response.status == 503
    finally:
        await runner.cleanup()
        await missing.dispose()


# ---------------------------------------------------------------------------- export/import


async def test_export_and_import_on_telegram(engine: AsyncEngine, tg: FakeTelegram) -> None:
    async with running(engine, tg=tg) as bot:
        for command in (
            "/subscribe rl +post-training -robotics",
            "/timezone Asia/Seoul",
            "/mode instant",
            "/time 07:30",
            "/lang ko",
        ):
            await bot.say(TG_USER, command)
        exported = await bot.say(TG_USER, "/export")
        line = exported.splitlines()[-1]
        assert line == (
            'trendbot:1 filter="rl +post-training -robotics" mode=instant time=07:30 '
            "tz=Asia/Seoul lang=ko"
        )
        other = TG_USER + 1
        reply = await bot.say(other, f"/import {line}")
        assert reply.startswith(t("ko", "dest.import.done"))
        async with engine.connect() as conn:
            first = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(TG_USER))
            second = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(other))
        assert first is not None and second is not None
        assert second.chat == replace(first.chat, chat_id=str(other))
        assert second.next_digest_at == first.next_digest_at


async def test_a_malformed_import_changes_nothing(engine: AsyncEngine, tg: FakeTelegram) -> None:
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_USER, "/subscribe rl")
        async with engine.connect() as conn:
            before = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(TG_USER))
        cases = {
            # Everything valid but the zone, which comes last: nothing of the rest applies.
            'trendbot:1 filter="cv" mode=instant time=07:00 tz=Mars/Olympus lang=ko': (
                t("en", "dest.import.bad.tz", value="Mars/Olympus")
            ),
            "trendbot:1 filter=cv mode=daily": t(
                "en", "dest.import.error.missing_field", field="time"
            ),
            'trendbot:1 filter="cv': t("en", "dest.import.error.syntax", field="filter"),
            "trendbot:2 filter=cv": t("en", "dest.import.error.header", field="trendbot:2"),
            "hello": t("en", "dest.import.error.header", field="hello"),
        }
        for line, expected in cases.items():
            reply = await bot.say(TG_USER, f"/import {line}")
            assert reply == f"{expected}\n{t('en', 'dest.import.nothing_changed')}", line
        assert await bot.say(TG_USER, "/import") == t("en", "dest.import.usage", p="/")
        async with engine.connect() as conn:
            after = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(TG_USER))
        assert after == before


async def test_export_and_import_on_slack(engine: AsyncEngine, sl: FakeSlack) -> None:
    async with running(engine, sl=sl) as bot:
        await bot.trend("subscribe rl -robotics", channel="C1", user="UUSER1")
        await bot.trend("timezone Europe/Berlin", channel="C1", user="UUSER1")
        line = (await bot.trend("export", channel="C1", user="UUSER1")).splitlines()[-1]
        assert (
            line
            == 'trendbot:1 filter="rl -robotics" mode=daily time=09:00 tz=Europe/Berlin lang=en'
        )
        reply = await bot.trend(f"import {line}", channel="C2", user="UUSER1")
        assert reply.startswith(t("en", "dest.import.done"))
        async with engine.connect() as conn:
            moved = await chat_store.get(conn, platform=Platform.SLACK, chat_id="C2")
        assert moved is not None
        assert (moved.chat.timezone, str(sorted(moved.chat.filter.excluded))) == (
            "Europe/Berlin",
            "['robotics']",
        )


def trendbot(
    database_url: str, *args: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env={**env, "DATABASE_URL": database_url, "WIKI_SOURCES": SOURCE},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_cli_export_and_import(
    engine: AsyncEngine, database_url: str, clean_env: dict[str, str], tmp_path: Path
) -> None:
    core = CommandCore(engine=engine, defaults=Defaults())
    alice = Caller(platform=Platform.TELEGRAM, chat_id="1001", user_id="1001")
    await core.handle(alice, "/subscribe rl +post-training")
    await core.handle(alice, "/timezone Asia/Seoul")
    await core.handle(Caller(platform=Platform.SLACK, chat_id="C9", user_id="U9"), "/lang ko")

    done = await asyncio.to_thread(trendbot, database_url, "export", env=clean_env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [json.loads(line)["chat"] for line in lines] == ["slack:C9", "telegram:1001"]
    assert json.loads(lines[1]) == {
        "chat": "telegram:1001",
        "kind": "private",
        "state": "active",
        "settings": (
            'trendbot:1 filter="rl +post-training" mode=daily time=09:00 tz=Asia/Seoul lang=en'
        ),
    }
    one = await asyncio.to_thread(
        trendbot, database_url, "export", "--chat", "telegram:1001", env=clean_env
    )
    assert one.stdout.splitlines() == [lines[1]]
    missing = await asyncio.to_thread(
        trendbot, database_url, "export", "--chat", "telegram:7", env=clean_env
    )
    assert missing.returncode == 1 and "no such chat" in missing.stderr

    # The chat changes meanwhile; the file puts it back, adds a chat, and skips two lines.
    await core.handle(alice, "/unsubscribe all")
    new_chat = json.dumps(
        {"chat": "telegram:-1002", "kind": "group", "settings": json.loads(lines[1])["settings"]}
    )
    bad_zone = json.loads(lines[0])
    bad_zone["settings"] = bad_zone["settings"].replace("tz=UTC", "tz=Nowhere/Land")
    dump = tmp_path / "chats.jsonl"
    dump.write_text(
        "\n".join([lines[1], "", "not json", new_chat, json.dumps(bad_zone)]) + "\n",
        encoding="utf-8",
    )
    done = await asyncio.to_thread(trendbot, database_url, "import", str(dump), env=clean_env)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "line 3: skipped: not a JSON object",
        "line 5: skipped: tz='Nowhere/Land': not an IANA time zone",
    ]
    assert done.stdout.splitlines()[-1] == "imported: 2, skipped: 2"
    async with engine.connect() as conn:
        restored = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id="1001")
        group = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id="-1002")
        slack = await chat_store.get(conn, platform=Platform.SLACK, chat_id="C9")
    assert restored is not None and group is not None and slack is not None
    assert restored.chat.filter.required == frozenset({"post-training"})
    assert group.chat.kind.value == "group" and group.chat.timezone == "Asia/Seoul"
    assert slack.chat.lang == "ko"  # its line was skipped whole: unchanged

    good = tmp_path / "good.jsonl"
    good.write_text(lines[0] + "\n", encoding="utf-8")
    done = await asyncio.to_thread(trendbot, database_url, "import", str(good), env=clean_env)
    assert done.returncode == 0, done.stderr
    done = await asyncio.to_thread(
        trendbot, database_url, "import", str(tmp_path / "absent"), env=clean_env
    )
    assert done.returncode == 1 and "cannot read" in done.stderr


# ---------------------------------------------------------------------------- alerts


async def _alert_texts(bot: Bot) -> tuple[list[str], list[str]]:
    """What the Telegram admin and the Slack admin were sent, oldest first."""
    assert bot.tg is not None and bot.sl is not None
    telegram = [str(m["text"]) for m in bot.tg.messages_to(TG_ADMIN)]
    slack = [str(m["text"]) for m in bot.sl.messages_to(bot.sl.im_channel(SLACK_ADMIN))]
    return telegram, slack


async def test_a_failing_source_alerts_each_admin_once_when_it_starts_and_once_when_it_ends(
    engine: AsyncEngine, tg: FakeTelegram, sl: FakeSlack
) -> None:
    async with running(engine, tg=tg, sl=sl) as bot:
        await bot.say(TG_ADMIN, "/lang ko")  # the admin's private chat, in Korean
        greeted = len(tg.messages_to(TG_ADMIN))
        for _ in range(2):
            await bot.alerts.after_poll([(SOURCE, "missing directory")])
            assert await bot.alerts.check() == []
        await bot.alerts.after_poll([(SOURCE, "missing directory")])
        (started,) = await bot.alerts.check()
        assert started.key == f"source:{source_id(SOURCE)}" and started.started
        for _ in range(3):  # still failing: nothing more
            await bot.alerts.after_poll([(SOURCE, "missing directory")])
            assert await bot.alerts.check() == []
        await bot.deliver()
        await bot.alerts.after_poll([(SOURCE, None)])
        (ended,) = await bot.alerts.check()
        assert not ended.started
        assert await bot.alerts.check() == []
        await bot.deliver()

        telegram, slack = await _alert_texts(bot)
        params = {"name": SOURCE, "count": 3, "error": "missing directory"}
        assert telegram[greeted:] == [
            t("ko", "dest.alert.start.source", **params),
            t("ko", "dest.alert.clear.source", name=SOURCE),
        ]
        assert slack == [
            t("en", "dest.alert.start.source", **params),
            t("en", "dest.alert.clear.source", name=SOURCE),
        ]
        async with engine.connect() as conn:
            log = await alert_store.incident_log(conn)
        assert [(key, cleared is not None) for key, _, cleared in log] == [
            (f"source:{source_id(SOURCE)}", True)
        ]


async def test_alerts_off_and_on_per_admin(
    engine: AsyncEngine, tg: FakeTelegram, sl: FakeSlack
) -> None:
    async with running(engine, tg=tg, sl=sl) as bot:
        dm = sl.add_channel(sl.im_channel(SLACK_ADMIN), user=SLACK_ADMIN)["id"]
        assert await bot.trend("alerts off", channel=dm, user=SLACK_ADMIN) == t(
            "en", "dest.alerts.off", p="/trend "
        )
        assert await bot.trend("alerts", channel=dm, user=SLACK_ADMIN) == t(
            "en", "dest.alerts.usage", p="/trend ", state=t("en", "dest.alerts.state.off")
        )
        assert await bot.say(TG_ADMIN, "/alerts on") == t("en", "dest.alerts.on", p="/")
        for _ in range(3):
            await bot.alerts.after_poll([(SOURCE, "gone")])
        assert len(await bot.alerts.check()) == 1
        await bot.deliver()
        telegram, slack = await _alert_texts(bot)
        assert telegram[-1].startswith("🚨") and slack == []

        await bot.trend("alerts on", channel=dm, user=SLACK_ADMIN)
        await bot.alerts.after_poll([(SOURCE, None)])
        assert len(await bot.alerts.check()) == 1
        await bot.deliver()
        telegram, slack = await _alert_texts(bot)
        assert telegram[-1].startswith("✅")
        assert slack == [t("en", "dest.alert.clear.source", name=SOURCE)]


async def test_alerts_is_for_admins_in_their_private_chat(
    engine: AsyncEngine, tg: FakeTelegram
) -> None:
    async with running(engine, tg=tg) as bot:
        assert await bot.say(TG_USER, "/alerts off") == t("en", "cmd.admins_only")
        group = -1001234
        reply = await bot.say(group, "/alerts off", user_id=TG_ADMIN)
        assert reply == t("en", "dest.alerts.private_only", p="/")
        async with engine.connect() as conn:
            assert await alert_store.admin_choices(conn) == {}
            refused = (await conn.execute(select(audit_log.c.action))).scalars().all()
        assert refused == ["alerts.refused"]


async def _queue(
    engine: AsyncEngine, chat_pk: int, *, status: str, created: dt.datetime, **values: Any
) -> None:
    row = outbox.insert().values(
        chat_pk=chat_pk,
        platform="telegram",
        kind="notice",
        payload=json.dumps({"text": "x"}),
        status=status,
        priority=0,
        attempts=values.pop("attempts", 0),
        parts_sent=0,
        not_before=created,
        created_at=created,
        **values,
    )
    async with engine.begin() as conn:
        await conn.execute(row)


async def test_a_stuck_queue_and_failing_sends_start_and_end_once(
    engine: AsyncEngine, tg: FakeTelegram
) -> None:
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_ADMIN, "/start")
        await bot.say(TG_USER, "/start")
        async with engine.connect() as conn:
            user = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(TG_USER))
        assert user is not None
        # The clock of the checks starts 40 minutes ago and catches up with the real one.
        start = utcnow() - dt.timedelta(minutes=40)
        # 12 sends in the window, 3 of them failed (25 %), one waiting since `start`.
        for _ in range(9):
            await _queue(engine, user.pk, status="sent", created=start, sent_at=start)
        for _ in range(3):
            await _queue(
                engine,
                user.pk,
                status="failed",
                created=start,
                claimed_at=start,
                attempts=8,
                last_error="network: refused",
            )
        await _queue(engine, user.pk, status="queued", created=start)
        bot.now[0] = start + dt.timedelta(minutes=10)
        changes = await bot.alerts.check()
        assert [(c.key, c.started, c.params) for c in changes] == [
            (
                "sends:telegram",
                True,
                {"platform": "Telegram", "percent": 25, "failed": 3, "total": 12},
            )
        ]
        bot.now[0] = start + dt.timedelta(minutes=31)  # the failures leave the window
        changes = await bot.alerts.check()
        assert [(c.key, c.started) for c in changes] == [("queue", True), ("sends:telegram", False)]
        bot.now[0] = start + dt.timedelta(minutes=40)
        assert await bot.alerts.check() == []
        # The queued message goes out with the alerts: the queue is clear.
        await bot.deliver()
        changes = await bot.alerts.check()
        assert [(c.key, c.started) for c in changes] == [("queue", False)]
        await bot.deliver()
        texts = [str(m["text"]) for m in tg.messages_to(TG_ADMIN)][1:]
        assert [text[0] for text in texts] == ["🚨", "🚨", "✅", "✅"]
        # Waiting: the stuck message and the first alert.
        assert texts[1] == t("en", "dest.alert.start.queue", minutes=31, depth=2)


async def test_alerts_go_ahead_of_digests(engine: AsyncEngine, tg: FakeTelegram) -> None:
    async with running(engine, tg=tg) as bot:
        await bot.say(TG_ADMIN, "/start")
        async with engine.connect() as conn:
            admin = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=str(TG_ADMIN))
        assert admin is not None
        async with engine.begin() as conn:
            await conn.execute(
                insert(outbox),
                [
                    {
                        "chat_pk": admin.pk,
                        "platform": "telegram",
                        "kind": "notice",
                        "payload": json.dumps({"text": f"digest {i}"}),
                        "status": "queued",
                        "priority": 10,
                        "attempts": 0,
                        "parts_sent": 0,
                        "not_before": utcnow(),
                        "created_at": utcnow(),
                    }
                    for i in range(3)
                ],
            )
        for _ in range(3):
            await bot.alerts.after_poll([(SOURCE, "gone")])
        await bot.alerts.check()
        async with engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(outbox.c.kind, outbox.c.priority).where(outbox.c.kind == "alert")
                )
            ).all()
        assert rows == [("alert", ALERT_PRIORITY)]
        await bot.deliver()
        texts = [str(m["text"]) for m in tg.messages_to(TG_ADMIN)][1:]
        assert texts[0].startswith("🚨") and texts[1:] == ["digest 0", "digest 1", "digest 2"]


async def test_a_rejected_token_is_an_incident_until_a_send_succeeds(
    engine: AsyncEngine, tg: FakeTelegram, sl: FakeSlack
) -> None:
    async with running(engine, tg=tg, sl=sl, telegram_updates=False) as bot:
        async with engine.begin() as conn:
            user = await chat_store.ensure(
                conn, defaults=ChatSettings(platform=Platform.TELEGRAM, chat_id=str(TG_USER))
            )
        await _queue(engine, user.pk, status="queued", created=utcnow())
        tg.token = "987654321:AAHanotherTokenForTests_0123456789ab"  # the bot's is revoked
        await bot.deliver()
        changes = await bot.alerts.check()
        assert [(c.key, c.started) for c in changes] == [("auth:telegram", True)]
        assert "AAHfake" not in str(changes[0].params)
        await bot.deliver()  # Telegram is down for the bot; the Slack admin hears of it
        (alert,) = [str(m["text"]) for m in sl.messages_to(sl.im_channel(SLACK_ADMIN))]
        assert alert.startswith("🚨") and "Telegram" in alert and TG_TOKEN not in alert
        assert await bot.alerts.check() == []

        tg.token = TG_TOKEN  # a new token is configured: the next send goes through
        await _queue(engine, user.pk, status="queued", created=utcnow())
        await bot.deliver()
        changes = await bot.alerts.check()
        assert [(c.key, c.started) for c in changes] == [("auth:telegram", False)]


def test_the_telegram_menu_has_the_destination_commands_once() -> None:
    from bot.channels.telegram.channel import menu_commands

    for lang in ("en", "ko"):
        names = [c.command for c in menu_commands(lang)]
        assert len(names) == len(set(names))
        assert {"feed", "export", "import"} <= set(names)
        assert "alerts" not in names  # admins only: in the admin help, not the menu


async def _round_trip(database_url: str, chat: ChatSettings) -> None:
    engine = create_engine(database_url)
    try:
        await upgrade(engine)
        core = CommandCore(engine=engine, defaults=Defaults())
        # One database for every example: each one's chats are new.
        first, second = (f"{uuid.uuid4().hex[:16]}{suffix}" for suffix in ("a", "b"))
        async with engine.begin() as conn:
            await chat_store.ensure(
                conn, defaults=replace(chat, platform=Platform.TELEGRAM, chat_id=first)
            )
        a = Caller(platform=Platform.TELEGRAM, chat_id=first, user_id="1")
        b = Caller(platform=Platform.TELEGRAM, chat_id=second, user_id="1")
        line = (await core.handle(a, "/export")).text.splitlines()[-1]
        await core.handle(b, f"/import {line}")
        async with engine.connect() as conn:
            moved = await chat_store.get(conn, platform=Platform.TELEGRAM, chat_id=second)
        assert moved is not None
        assert replace(moved.chat, chat_id=first, kind=chat.kind, state=chat.state) == replace(
            chat, platform=Platform.TELEGRAM, chat_id=first
        )
    finally:
        await engine.dispose()


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(chat=transfer_chats())
def test_export_then_import_through_the_store_is_lossless(
    database_url: str, chat: ChatSettings
) -> None:
    """What `export` reads from the store and `import` writes back, on each backend."""
    asyncio.run(_round_trip(database_url, chat))
