"""The settings page against someone who means harm: forged, replayed and raced links,
planted cookies, cross-site and cross-chat posts, bodies and fields built to break the
form or the settings line, markup where text belongs, odd methods and paths, a Mini App's
``initData`` bent every way, and a database that does not answer; on each backend, through
the bot's own HTTP server (helpers from ``test_settings_page``)."""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import io
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from urllib.parse import quote, urlencode

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.console.chat import ConsoleChannel
from bot.channels.telegram import webapp
from bot.commands import CommandCore, Defaults
from bot.commands.settings_page import PrivateLink
from bot.errors import TransferError
from bot.i18n import t
from bot.matching import transfer
from bot.models import ChatKind, ChatSettings, PageText, Platform
from bot.ops.settings_page import COOKIE, HEADERS, SettingsPage, mini_app_check
from bot.ops.web import WebHooks, make_app
from bot.ops.web import start as start_web
from bot.store.engine import create_engine
from bot.store.schema import chat_feeds, chats, metadata, settings_links
from bot.util import utcnow
from tests.conftest import Settings
from tests.integration.test_settings_page import (
    BASE,
    LINK,
    SOURCE,
    TG_TOKEN,
    USER,
    Site,
    app_form,
    chat,
    csrf_of,
    form,
    init_data,
    link_for,
    notices,
    opened,
    page,
    publish,
    session,
    site,
    telegram,
)
from tests.ports import free_port

__all__ = ["site"]  # the fixture, shared

PAGE = "/settings/"


def assert_headers(answer: aiohttp.ClientResponse, *, cached: bool = False) -> None:
    for name, value in HEADERS.items():
        if name == "Cache-Control" and cached:
            continue
        assert answer.headers.get(name) == value, (answer.status, name)


async def post(
    site: Site, cookie: str, data: dict[str, str] | bytes, **headers: str
) -> tuple[int, str]:
    """Post ``data`` as a browser posts a form (urlencoded), however odd its names."""
    body = urlencode(data).encode() if isinstance(data, dict) else data
    headers = {"Content-Type": "application/x-www-form-urlencoded", **session(cookie), **headers}
    async with site.http.post(site.origin + PAGE, data=io.BytesIO(body), headers=headers) as answer:
        assert_headers(answer)
        return answer.status, html.unescape(await answer.text())


async def signed_in(site: Site) -> tuple[str, str]:
    """A browser on the page of the user's private chat: its session and CSRF token."""
    cookie = await opened(site, await link_for(site))
    return cookie, await csrf_of(site, cookie)


# ---------------------------------------------------------------------------- getting in


async def test_two_browsers_opening_one_link_at_once_get_one_session(site: Site) -> None:
    link = await link_for(site)

    async def open_once() -> int:
        async with site.http.post(site.url(link), allow_redirects=False) as answer:
            assert_headers(answer)
            return answer.status

    statuses = await asyncio.gather(*(open_once() for _ in range(6)))
    assert sorted(statuses) == [303] + [403] * 5, statuses
    async with site.engine.connect() as conn:
        sessions = (await conn.execute(select(settings_links.c.session_hash))).scalars().all()
    assert len([s for s in sessions if s is not None]) == 1


async def test_a_planted_cookie_never_becomes_a_session(site: Site) -> None:
    planted = "A" * 43  # what an attacker would set in the victim's browser beforehand
    link = await link_for(site)
    async with site.http.post(
        site.url(link), allow_redirects=False, headers=session(planted)
    ) as answer:
        assert answer.status == 303
        assert answer.cookies[COOKIE].value != planted
    async with site.http.get(site.origin + PAGE, headers=session(planted)) as answer:
        assert answer.status == 403
        assert_headers(answer)


async def test_an_expired_session_and_a_replayed_link_open_nothing(site: Site) -> None:
    link = await link_for(site)
    cookie = await opened(site, link)
    async with site.engine.begin() as conn:
        await conn.execute(
            update(settings_links).values(session_expires_at=utcnow() - dt.timedelta(seconds=1))
        )
    async with site.http.get(site.origin + PAGE, headers=session(cookie)) as answer:
        assert answer.status == 403
        assert t("en", "page.refused.session.title") in html.unescape(await answer.text())
    status, _ = await post(site, cookie, form("0" * 64, lang="ko"))
    assert status == 403
    for method in ("GET", "POST"):
        async with site.http.request(method, site.url(link), allow_redirects=False) as again:
            assert again.status == 403 and COOKIE not in again.cookies


@pytest.mark.parametrize(
    "cookie",
    [b"\xff\xfe", b"caf\xc3\xa9", b"a" * 64 + b"\xff", b"x;" + b"\xc0" * 30],
    ids=["invalid-utf8", "non-ascii", "long-invalid", "overlong"],
)
async def test_a_cookie_of_odd_bytes_is_refused_not_unavailable(site: Site, cookie: bytes) -> None:
    # A raw request: a client library would refuse to send such a header.
    host, port = site.origin.removeprefix("http://").split(":")
    for method, path in (("GET", PAGE), ("GET", PAGE + "preview?filter=rl"), ("POST", PAGE)):
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n".encode()
            + b"Cookie: "
            + COOKIE.encode()
            + b"="
            + cookie
            + b"\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()
        raw = await reader.read()
        writer.close()
        status = int(raw.split(b" ", 2)[1])
        assert status == 403, (method, path, raw[:300])
        assert b"Content-Security-Policy: default-src 'none'" in raw


async def test_odd_bytes_in_the_path_or_the_language_are_refused_with_a_page(
    site: Site,
) -> None:
    host, port = site.origin.removeprefix("http://").split(":")
    for path, language in (
        (b"/settings/open/%ff%fe", b"\xff"),
        (b"/settings/open/" + b"A" * 43, b"\xc0\xaf, ko;q=\xff"),
        (b"/settings/", b"ko-\xed\xa0\x80"),
        (b"/settings/app", b"\xff" * 1000),
    ):
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            b"GET "
            + path
            + b" HTTP/1.1\r\nHost: x\r\nAccept-Language: "
            + language
            + b"\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()
        raw = await reader.read()
        writer.close()
        status = int(raw.split(b" ", 2)[1])
        assert status in (200, 403, 404), (path, language, raw[:300])
        assert b"Content-Security-Policy: default-src 'none'" in raw, raw[:300]


# ---------------------------------------------------------------------------- the form


async def test_a_csrf_token_of_another_session_or_a_cross_site_post_changes_nothing(
    site: Site,
) -> None:
    mine, _ = await signed_in(site)
    _, theirs = await signed_in(site)  # another session of the same chat
    before = (await chat(site)).chat
    status, _ = await post(site, mine, form(theirs, lang="ko"))
    assert status == 403
    no_csrf = {k: v for k, v in form("", lang="ko").items() if k != "csrf"}
    status, _ = await post(site, mine, no_csrf, Origin="https://evil.example")
    assert status == 403
    assert (await chat(site)).chat == before and await notices(site) == []


async def test_a_csrf_token_of_any_characters_is_refused_not_unavailable(site: Site) -> None:
    cookie, csrf = await signed_in(site)
    before = (await chat(site)).chat
    for token in ("é" * 64, csrf[:-1] + "é", "\u202e", "\x00" * 64, csrf + "\n"):
        status, body = await post(site, cookie, form(token, lang="ko"))
        assert status == 403, (token, body)
        assert t("en", "page.refused.form.title") in body
    assert (await chat(site)).chat == before and await notices(site) == []


async def test_a_session_of_one_chat_never_changes_another(site: Site) -> None:
    other = telegram("777")
    await site.core.handle(other, "/start")
    cookie, csrf = await signed_in(site)
    status, _ = await post(
        site, cookie, form(csrf, lang="ko", chat="telegram:777", chat_pk="1", chat_id="777")
    )
    assert status == 200
    assert (await chat(site)).chat.lang == "ko"
    assert (await chat(site, "777")).chat.lang == "en"


async def test_smart_quotes_in_a_value_do_not_write_another_field(site: Site) -> None:
    """A form's value goes into the settings line quoted; the line's reader turns
    typographic quotes into plain ones, so such a value must not close its quotes."""
    cookie, csrf = await signed_in(site)
    before = (await chat(site)).chat
    for bad in (
        {"time": "09:00\u201c quiet=\u201c22:00-07:00"},
        {"tz": "UTC\u201d limit=\u201e5"},
        {"quiet": "22:00-07:00\u201f limit=\u201f3"},
    ):
        status, body = await post(site, cookie, form(csrf, **bad))
        assert status == 400, (bad, body)
        assert t("en", "dest.import.nothing_changed") in body
        assert (await chat(site)).chat == before, bad
    assert await notices(site) == []


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(["time", "tz", "quiet", "limit", "day"]),
    value=st.text(
        alphabet=st.sampled_from(' "\\=\u201c\u201d\u201e\u201fquietlm:09-5\n'), max_size=30
    ),
)
def test_a_value_of_the_page_writes_its_own_field_alone(field: str, value: str) -> None:
    """The line the page's fields become (:func:`transfer.line_of`) reads back either
    refused, naming that field, or with that field alone changed: never another one."""
    base = ChatSettings(platform=Platform.TELEGRAM, chat_id=USER, kind=ChatKind.PRIVATE)
    fields = {"filter": "", "mode": "weekly", "time": "09:00", "tz": "UTC", "lang": "en"}
    line = transfer.line_of({**fields, field: value})
    try:
        after = transfer.import_line(base, line)
    except TransferError as exc:
        assert exc.field in (field, ""), (line, exc.field)
        return
    changed = {
        name
        for name in ("digest_time", "timezone", "quiet", "limit", "weekday", "lang", "mode")
        if getattr(after, name) != getattr(base, name)
    }
    own = {"time": "digest_time", "tz": "timezone", "day": "weekday"}.get(field, field)
    assert changed <= {own, "mode"}, (line, changed)


BAD_FIELDS = [
    {"limit": "0"},
    {"limit": "51"},
    {"limit": "-1"},
    {"limit": "1e3"},
    {"time": "24:00"},
    {"time": "9"},
    {"time": "09:00:00"},
    {"quiet": "07:00-07:00x"},
    {"quiet": "25:00-07:00"},
    {"mode": "weekly", "day": "funday"},
    {"mode": "hourly"},
    {"mode": ""},
    {"lang": "fr"},
    {"lang": ""},
    {"tz": "../../etc/passwd"},
    {"tz": "/etc/localtime"},
    {"tz": "Asia/Seoul\x00"},
    {"tz": "x" * 10_000},
    {"time": "09:00\nlang=ko"},
    {"tz": 'UTC" lang="ko'},
    {"tz": "UTC\\"},
    {"tag:rl\nko": "any"},
    {"tag:rl\u202e": "any"},
    {"tz": "UTC\u202e\u2066"},
    {"time": "\u202e09:00"},
    {"tag:*": "any"},
    {"tag:-rl": "any"},
    {"tag:": "any"},
    {"tag:" + "r" * 5000: "any"},
    {'tag:"rl"': "any"},
    {"tag:rl\\": "any"},
]


@pytest.mark.parametrize("bad", BAD_FIELDS, ids=[repr(b)[:40] for b in BAD_FIELDS])
async def test_a_field_past_its_limits_is_named_and_nothing_changes(
    site: Site, bad: dict[str, str]
) -> None:
    cookie, csrf = await signed_in(site)
    before = (await chat(site)).chat
    status, body = await post(site, cookie, form(csrf, **{"tag:rl": "any", "lang": "ko", **bad}))
    assert status == 400, body
    assert t("en", "dest.import.nothing_changed") in body
    # The message names the value without the controls that would turn it around (the
    # form's own field keeps what was typed, as a field does).
    [message] = re.findall(r'<p id="message"[^>]*>(.*?)</p>', body, re.DOTALL)
    assert "\u202e" not in message and "\u2066" not in message
    assert (await chat(site)).chat == before
    assert await notices(site) == []


async def test_quiet_hours_may_wrap_midnight(site: Site) -> None:
    cookie, csrf = await signed_in(site)
    status, _ = await post(site, cookie, form(csrf, quiet="23:30-00:30", limit="50"))
    assert status == 200
    record = (await chat(site)).chat
    assert str(record.quiet) == "23:30-00:30" and record.limit == 50


async def test_many_fields_and_malformed_bodies_are_refused_whole(site: Site) -> None:
    cookie, csrf = await signed_in(site)
    before = (await chat(site)).chat
    # As many tag fields as the body's limit lets through: one answer, nothing applied.
    many = "&".join(f"tag:t{i}=any" for i in range(6000))
    body = f"csrf={csrf}&mode=daily&time=09:00&tz=UTC&lang=en&{many}".encode()
    started = time.monotonic()
    status, text = await post(site, cookie, body)
    assert status == 400 and t("en", "dest.import.nothing_changed") in text
    assert time.monotonic() - started < 20
    # 100,000 of them: past the body's limit.
    huge = "&".join(f"tag:t{i}=any" for i in range(100_000)).encode()
    status, _ = await post(site, cookie, b"csrf=" + csrf.encode() + b"&" + huge)
    assert status in (400, 413)
    for junk in (
        b"%zz%&&==&=&csrf",
        b"\xff\xfe\xfd",
        b"csrf=" + csrf.encode() + b"&lang=%ff%fe&mode=daily",
        b"csrf=" + csrf.encode() + b"&mode[]=daily&mode[x][y]=1&time[0]=1",
        b"csrf=" + csrf.encode() + b"&" + b"&" * 60_000,
    ):
        status, _ = await post(site, cookie, junk)
        assert status in (400, 403), junk[:40]
    assert (await chat(site)).chat == before and await notices(site) == []


async def test_preview_takes_any_query_without_failing(site: Site) -> None:
    cookie, _ = await signed_in(site)
    for query in (
        "filter=%FF%FE",
        "filter=" + quote("rl\u202e -x"),
        "filter=" + "rl%20" * 1500,
        "filter=%22%5C%00",
        "filter=(((((",
        "filter=rl&filter=*",
        "x=" + "a" * 6000,
    ):
        async with site.http.get(
            f"{site.origin}{PAGE}preview?{query}", headers=session(cookie)
        ) as answer:
            assert answer.status in (200, 400), query[:30]
            assert_headers(answer)
            assert isinstance(await answer.json(), dict)
    async with site.http.get(
        f"{site.origin}{PAGE}preview?filter=" + "a" * 20_000, headers=session(cookie)
    ) as answer:
        assert answer.status < 500  # the server's limit on a request line


async def test_a_body_sent_in_chunks_past_the_limit_is_refused(site: Site) -> None:
    cookie, csrf = await signed_in(site)
    before = (await chat(site)).chat

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: chunked
        yield f"csrf={csrf}&lang=ko&mode=daily&time=09:00&tz=UTC&x=".encode()
        for _ in range(200):
            yield b"a" * 1024

    async with site.http.post(
        site.origin + PAGE,
        data=chunks(),
        headers={"Content-Type": "application/x-www-form-urlencoded", **session(cookie)},
    ) as answer:
        assert answer.status == 400
        assert_headers(answer)
    assert (await chat(site)).chat == before


@pytest.mark.parametrize("tail", ["", "feed"])
async def test_every_form_refuses_a_body_past_the_limit_alike(site: Site, tail: str) -> None:
    # The settings form and the new-feed button check a posted form in one place: the
    # same bound, the same answer, nothing changed (no new feed address either).
    cookie, csrf = await signed_in(site)
    before = (await chat(site)).chat
    async with site.engine.connect() as conn:
        feeds = (await conn.execute(select(chat_feeds))).all()
    async with site.http.post(
        site.origin + PAGE + tail,
        data=f"csrf={csrf}&x=".encode() + b"a" * 100_000,
        headers={"Content-Type": "application/x-www-form-urlencoded", **session(cookie)},
    ) as answer:
        assert answer.status == 400
        assert_headers(answer)
    assert (await chat(site)).chat == before
    async with site.engine.connect() as conn:
        assert (await conn.execute(select(chat_feeds))).all() == feeds


# ---------------------------------------------------------------------------- markup


async def test_markup_in_titles_tags_and_refusals_stays_text(site: Site) -> None:
    evil = "<script>alert(1)</script>\"'><img src=x onerror=alert(1)>"
    await publish(
        site.engine,
        replace(
            page("evil", ("rl",), days_ago=0),
            texts=(PageText("en", evil, evil), PageText("ko", evil, evil)),
        ),
    )
    cookie, csrf = await signed_in(site)
    async with site.http.get(site.origin + PAGE, headers=session(cookie)) as answer:
        body = await answer.text()
    status, _ = await post(site, cookie, form(csrf, **{"tag:rl": "any"}))
    assert status == 200
    async with site.http.post(
        site.origin + PAGE, data=form(csrf, **{f"tag:{evil}": "any"}), headers=session(cookie)
    ) as answer:
        refused = await answer.text()
    for text in (body, refused):
        assert "<script>alert" not in text and "<img src=x" not in text
        assert text.count("<script") == 1  # the page's own script alone
    async with site.http.get(
        f"{site.origin}{PAGE}preview?filter=rl", headers=session(cookie)
    ) as answer:
        assert answer.content_type == "application/json"
        assert evil in (await answer.json())["titles"]  # text, set by textContent
    async with site.http.get(
        f"{site.origin}{PAGE}open/{quote(evil, safe='')}",
        allow_redirects=False,
        headers={"Accept-Language": evil},
    ) as answer:
        text = await answer.text()
        assert answer.status == 403 and "<script>alert" not in text and "<img" not in text


# ---------------------------------------------------------------------------- paths, methods


async def test_every_answer_carries_the_headers_and_no_path_escapes(site: Site) -> None:
    cookie, _ = await signed_in(site)
    paths = {
        "static/settings.js": 200,
        "static/settings.css": 200,
        "static/page.html": 404,
        "static/../page.html": 404,
        "static/%2e%2e/page.html": 404,
        "static/%2e%2e%2f%2e%2e%2fsettings.py": 404,
        "static/..%5csettings_page.py": 404,
        "static/settings.js/": 404,
        "static/": 404,
        "static/settings.js%00.html": 404,
        "nothing": 404,
        "open/": 403,
    }
    for path, status in paths.items():
        async with site.http.get(
            site.origin + PAGE + path, headers=session(cookie), allow_redirects=False
        ) as answer:
            assert answer.status == status, path
            assert_headers(answer, cached=path.startswith("static/settings."))
            if status == 200:
                assert "function" in await answer.text() or "body" in await answer.text()
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"):
        for path in ("", "open/x", "app", "preview", "static/settings.js"):
            async with site.http.request(
                method, site.origin + PAGE + path, headers=session(cookie)
            ) as answer:
                assert answer.status in (404, 405), (method, path)
                assert_headers(answer)


# ---------------------------------------------------------------------------- Mini App


def _signed(fields: dict[str, str], *, token: str = TG_TOKEN) -> str:
    return urlencode({**fields, "hash": webapp.sign(fields, bot_token=token)})


async def test_init_data_bent_every_way_opens_nothing(site: Site) -> None:
    await site.core.handle(telegram(), "/start")
    await site.core.handle(telegram("-100500", kind=ChatKind.GROUP), "/start")
    now = int(time.time())
    user = json.dumps({"id": int(USER)})
    good = {"auth_date": str(now), "user": user}
    bent = [
        _signed(good) + "&user=" + quote(json.dumps({"id": 999})),  # a name twice
        urlencode(good),  # no hash
        _signed(good).replace("hash=", "hash=" + "0" * 64 + "&x="),
        _signed({**good, "user": json.dumps({"id": str(USER)})}),  # a string id
        _signed({**good, "user": json.dumps({"id": float(USER)})}),
        _signed({**good, "user": json.dumps({"id": True})}),
        _signed({**good, "user": json.dumps({"id": -100500})}),  # a group's id
        _signed({**good, "user": json.dumps([int(USER)])}),
        _signed({**good, "user": "[" * 3000}),  # deeply nested
        _signed({**good, "auth_date": str(now + 600)}),  # from the future
        _signed({**good, "auth_date": "9" * 5000}),
        _signed({**good, "auth_date": "-1"}),
        _signed({**good, "auth_date": "1e9"}),
        _signed({**good, "pad": "x" * 5000}),  # huge
        _signed({"auth_date": str(now)}),  # no user
        "%ff%fe=%ff",
        "\x00",
    ]
    for data in bent:
        async with site.http.post(site.origin + PAGE + "app", data=app_form(data)) as answer:
            assert answer.status == 403, data[:80]
            assert_headers(answer)
            assert COOKIE not in answer.cookies
    async with site.http.post(site.origin + PAGE + "app", data=b"\xff" * 70_000) as answer:
        assert answer.status == 403
    async with site.engine.connect() as conn:
        assert (await conn.execute(select(settings_links))).first() is None


# ---------------------------------------------------------------------------- gone chats


async def test_a_deleted_chat_s_session_opens_and_saves_nothing(site: Site) -> None:
    cookie, csrf = await signed_in(site)
    link = await link_for(site)
    async with site.engine.begin() as conn:
        await conn.execute(delete(chats))
    async with site.http.get(site.origin + PAGE, headers=session(cookie)) as answer:
        assert answer.status == 403
        assert_headers(answer)
    status, _ = await post(site, cookie, form(csrf, lang="ko"))
    assert status == 403
    for method in ("GET", "POST"):
        async with site.http.request(method, site.url(link), allow_redirects=False) as answer:
            assert answer.status == 403
    async with site.engine.connect() as conn:
        assert (await conn.execute(select(chats))).first() is None


async def _yes() -> bool:
    return True


@pytest.mark.parametrize("merged", [False, True], ids=["moved", "merged"])
async def test_a_group_that_moved_to_a_new_id_is_saved_there_and_not_made_again(
    site: Site, merged: bool
) -> None:
    """A Telegram group that became a supergroup (``migrate_to_chat_id``) while its page
    was open: the session saves the chat under its new id, never recreating the old one."""
    group = telegram("-100", kind=ChatKind.GROUP, can_manage=_yes)
    if merged:
        await site.core.handle(telegram("-1009", kind=ChatKind.GROUP, can_manage=_yes), "/start")
    # In a group the link goes to the pressing administrator's private chat.
    await site.core.handle(telegram(), "/start")
    sent = await site.core.open_page_privately(group)
    assert isinstance(sent, PrivateLink)
    [[button]] = sent.reply.buttons
    assert button.url is not None
    cookie = await opened(site, button.url)
    csrf = await csrf_of(site, cookie)
    assert await site.core.chat_moved(
        platform=Platform.TELEGRAM, old_chat_id="-100", new_chat_id="-1009"
    )
    status, _ = await post(site, cookie, form(csrf, lang="ko"))
    async with site.engine.connect() as conn:
        ids = (await conn.execute(select(chats.c.chat_id))).scalars().all()
    assert "-100" not in ids
    assert status == 200  # the same group: its session went with it
    assert (await chat(site, "-1009")).chat.lang == "ko"


# ---------------------------------------------------------------------------- the database


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_a_database_that_is_away_gets_503_pages(
    kind: str, tmp_path: object, caplog: pytest.LogCaptureFixture
) -> None:
    url = (
        f"sqlite+aiosqlite:///{tmp_path}/missing/dir/x.db"
        if kind == "sqlite"
        else f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/test"
    )
    engine: AsyncEngine = create_engine(url)
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, public_base_url=BASE, wiki_sources=(SOURCE,), telegram_bot_token=TG_TOKEN
    )
    core = CommandCore(engine=engine, defaults=Defaults(), public_base_url=BASE)
    server = SettingsPage(core=core, settings=settings, mini_app=mini_app_check(settings))
    runner, port = await start_web(
        make_app(engine=engine, hooks=WebHooks(settings_page=server.handle)),
        host="127.0.0.1",
        port=0,
    )
    origin = f"http://127.0.0.1:{port}"
    cookie = session("S" * 43)
    good = init_data(int(USER), signed_at=time.time())
    try:
        async with aiohttp.ClientSession() as http:
            for method, path, data in (
                ("GET", "open/" + "T" * 43, None),
                ("POST", "open/" + "T" * 43, None),
                ("GET", "", None),
                ("POST", "", urlencode(form("x"))),
                ("GET", "preview?filter=rl", None),
                ("POST", "app", app_form(good)),
            ):
                async with http.request(
                    method,
                    origin + PAGE + path,
                    data=data,
                    headers=cookie,
                    allow_redirects=False,
                ) as answer:
                    text = await answer.text()
                    assert answer.status == 503, (path, text)
                    assert_headers(answer)
                    assert "Traceback" not in text
                    assert t("en", "page.refused.unavailable.title") in html.unescape(text)
    finally:
        await runner.cleanup()
        await engine.dispose()
    assert not [r for r in caplog.records if r.exc_info]
    assert "T" * 43 not in caplog.text and "S" * 43 not in caplog.text


# ---------------------------------------------------------------------------- secrets


async def test_no_token_session_or_csrf_in_logs_or_in_clear_in_the_database(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    link = await link_for(site)
    token = LINK.match(link)[1]  # type: ignore[index]
    cookie = await opened(site, link)
    csrf = await csrf_of(site, cookie)
    await post(site, cookie, form(csrf, lang="ko"))
    await post(site, cookie, form("0" * 64, lang="en"))
    for method in ("GET", "POST"):  # the door of a used link, and its button
        async with site.http.request(method, site.url(link), allow_redirects=False):
            pass
    await site.core.handle(telegram(), "/start")
    async with site.http.post(
        site.origin + PAGE + "app", data=app_form(init_data(int(USER), signed_at=time.time()))
    ) as answer:
        app_cookie = answer.cookies[COOKIE].value
    # The console prints its link to its own terminal, and nowhere else.
    out = io.StringIO()
    await ConsoleChannel(
        core=site.core, stdin=io.StringIO("/settings\n/quit\n"), out=out, interactive=False
    ).run()
    printed = re.search(r"^Open settings: \S+/open/(\S+)$", out.getvalue(), re.MULTILINE)
    assert printed
    for secret in (token, cookie, csrf, app_cookie, printed[1]):
        assert secret not in caplog.text
    async with site.engine.connect() as conn:  # every table: the outbox's replies too
        dumped = ""
        for table in metadata.sorted_tables:
            rows = (await conn.execute(select(table))).mappings().all()
            dumped += json.dumps([dict(r) for r in rows], default=str)
    for secret in (token, cookie, csrf, app_cookie, printed[1]):
        assert secret not in dumped
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", cookie)
