"""Feed sources over HTTP: an httpx.MockTransport for most cases, a local server for the rest."""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import json
import logging
import threading
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import feedparser.http
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bot
from bot.errors import SourceError
from bot.models import Page, PageText, Skipped
from bot.rules.sources import parse_source
from bot.sources.entries import MAX_FEED_ENTRIES, parse_feed
from bot.sources.feed import (
    FEED_TIMEOUT,
    MAX_ETAG_CHARS,
    MAX_FEED_BYTES,
    MAX_REDIRECTS,
    FeedResult,
    fetch_feed,
    make_feed_client,
)
from tests.ports import free_port

FEEDS = Path(__file__).parents[1] / "fixtures" / "feeds"
URL = "https://feeds.example.org/feed"
ATOM = (FEEDS / "atom.xml").read_bytes()
RSS = (FEEDS / "rss.xml").read_bytes()
JSON_FEED = (FEEDS / "feed.json").read_bytes()

Handler = Callable[[httpx.Request], httpx.Response]


async def fetch(
    handler: Handler,
    *,
    url: str = URL,
    etag: str | None = None,
    last_modified: str | None = None,
    default_lang: str = "en",
    allow_cross_host: bool = False,
) -> FeedResult:
    async with make_feed_client(transport=httpx.MockTransport(handler)) as client:
        return await fetch_feed(
            client,
            url,
            etag=etag,
            last_modified=last_modified,
            default_lang=default_lang,
            allow_cross_host=allow_cross_host,
        )


async def fetch_error(
    handler: Handler, *, url: str = URL, allow_cross_host: bool = False
) -> SourceError:
    with pytest.raises(SourceError) as caught:
        await fetch(handler, url=url, allow_cross_host=allow_cross_host)
    assert caught.value.source == url
    return caught.value


async def failure_reason(client: httpx.AsyncClient, url: str) -> str:
    """The reason of the SourceError that ``fetch_feed`` must raise for ``url``."""
    with pytest.raises(SourceError) as caught:
        await fetch_feed(client, url, etag=None, last_modified=None, default_lang="en")
    return caught.value.reason


def respond(body: bytes, content_type: str, **headers: str) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"Content-Type": content_type, **headers})

    return handler


# --- formats ----------------------------------------------------------------------------------


async def test_atom_with_categories() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            content=ATOM,
            headers={
                "Content-Type": "application/atom+xml; charset=utf-8",
                "ETag": '"atom-1"',
                "Last-Modified": "Sat, 29 Aug 2026 12:00:00 GMT",
            },
        )

    result = await fetch(handler)
    assert result == FeedResult(
        not_modified=False,
        pages=[
            Page(
                source=URL,
                key="urn:wiki:papers/2026/2608.27351-evolution-strategies-reasoning",
                texts=(
                    PageText(
                        lang="ko",
                        title="Understanding Evolution Strategies for LLM Reasoning",
                        tldr="Evolution Strategies — 파라미터 벡터 전체를 섭동한다.\n\n"
                        "두 번째 발견 & 결론.",
                    ),
                ),
                tags=("rl", "reasoning", "post-training", "machine-learning"),
                url="https://wiki.example.org/papers/2026/2608.27351-evolution-strategies-reasoning",
                created=dt.date(2026, 8, 29),
                updated=dt.date(2026, 8, 30),
            ),
            Page(
                source=URL,
                key="urn:wiki:papers/2026/2608.27448-ttpo",
                texts=(
                    PageText(
                        lang="en",  # the entry's own xml:lang
                        title="TTPO: Test-Time Policy Optimization",
                        tldr="Optimise the policy at test time.",
                    ),
                ),
                tags=("test-time",),  # the over-long category is not a tag
                url="https://feeds.example.org/papers/2026/2608.27448-ttpo",  # resolved
                created=None,
                updated=dt.date(2026, 8, 27),
            ),
        ],
        skipped=[],
        etag='"atom-1"',
        last_modified="Sat, 29 Aug 2026 12:00:00 GMT",
    )
    [request] = seen
    assert request.headers["User-Agent"] == f"ai-trend-notifier/{bot.__version__}"
    assert "If-None-Match" not in request.headers
    assert "If-Modified-Since" not in request.headers


async def test_rss_with_several_categories() -> None:
    result = await fetch(respond(RSS, "application/rss+xml"), default_lang="ko")
    first, second = result.pages
    assert first.key == "note-2608.17310"
    assert first.url == "https://notes.example.org/2608.17310"
    assert first.tags == ("rl", "agents", "evolution-strategies")
    assert first.texts == (
        PageText(
            lang="en",  # the channel's <language>en-us</language>
            title="Agentic ESOpt: Fine-Tuning Long-Horizon LLM Agents",
            tldr="ES instead of RL, on efficiency grounds: inference-level GPU memory & "
            "trajectory-level credit.",
        ),
    )
    assert (first.created, first.updated) == (dt.date(2026, 8, 18), None)
    assert second.key == "https://notes.example.org/no-guid"  # no guid: the link
    assert second.tags == ("reasoning", "post-training")
    assert second.texts[0].tldr == "Plain text summary."
    assert result.skipped == [Skipped(URL, "entry 3", "entry has no id or link")]
    assert (result.etag, result.last_modified) == (None, None)


async def test_rss_without_language_uses_the_default() -> None:
    body = RSS.replace(b"<language>en-us</language>", b"")
    result = await fetch(respond(body, "application/rss+xml"), default_lang="ko")
    assert {p.texts[0].lang for p in result.pages} == {"ko"}


async def test_json_feed() -> None:
    result = await fetch(respond(JSON_FEED, "application/feed+json"))
    assert result.pages == [
        Page(
            source=URL,
            key="papers/2026/2608.27351-evolution-strategies-reasoning",
            texts=(
                PageText(
                    lang="en",
                    title="Understanding Evolution Strategies for LLM Reasoning",
                    tldr="ES reaches a higher Pass@K than GRPO.",
                ),
            ),
            tags=("rl", "reasoning"),
            url="https://wiki.example.org/papers/2026/2608.27351-evolution-strategies-reasoning",
            created=dt.date(2026, 8, 30),  # 23:30 at UTC-5 is the next day in UTC
            updated=dt.date(2026, 8, 30),
        ),
        Page(
            source=URL,
            key="papers/2026/2608.27448-ttpo",
            texts=(
                PageText(lang="ko", title="TTPO", tldr="Test-time policy optimisation & more."),
            ),
            url="https://wiki.example.org/papers/2026/2608.27448-ttpo",
        ),
    ]
    assert result.skipped == [
        Skipped(URL, "entry 3", "entry has no id or url"),
        Skipped(URL, "entry 4", "entry is not an object"),
    ]


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", ""])
async def test_json_feed_is_recognised_by_type_or_body(content_type: str) -> None:
    result = await fetch(respond(b"\n " + JSON_FEED, content_type))
    assert len(result.pages) == 2


async def test_duplicate_entry_ids_keep_the_first() -> None:
    body = b'{"items": [{"id": "1", "title": "first"}, {"id": 1, "title": "second"}]}'
    result = await fetch(respond(body, "application/json"))
    assert [(p.key, p.texts[0].title, p.url) for p in result.pages] == [("1", "first", None)]


async def test_an_empty_feed_is_not_an_error() -> None:
    body = b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>'
    result = await fetch(respond(body, "application/rss+xml"))
    assert (result.pages, result.skipped) == ([], [])


async def test_a_malformed_feed_with_entries_keeps_them() -> None:
    body = (
        b'<rss version="2.0"><channel><item><title>a</title><link>https://x.org/a</link>'
        b"</item><oops></channel></rss>"
    )
    result = await fetch(respond(body, "application/rss+xml"))
    assert [p.key for p in result.pages] == ["https://x.org/a"]


async def test_feedparser_is_never_asked_to_fetch(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("feedparser fetched a URL")

    monkeypatch.setattr(feedparser.http, "get", no_network)
    error = await fetch_error(respond(b"https://attacker.example/feed", "text/plain"))
    assert error.reason.startswith("invalid feed")


# --- conditional requests ---------------------------------------------------------------------


async def test_not_modified_sends_validators_and_parses_nothing() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(304)

    result = await fetch(handler, etag='"v1"', last_modified="Sat, 29 Aug 2026 12:00:00 GMT")
    assert result == FeedResult(
        not_modified=True,
        pages=[],
        skipped=[],
        etag='"v1"',
        last_modified="Sat, 29 Aug 2026 12:00:00 GMT",
    )
    [request] = seen
    assert request.headers["If-None-Match"] == '"v1"'
    assert request.headers["If-Modified-Since"] == "Sat, 29 Aug 2026 12:00:00 GMT"


async def test_not_modified_keeps_a_validator_it_renews() -> None:
    result = await fetch(lambda request: httpx.Response(304, headers={"ETag": '"v2"'}), etag='"v1"')
    assert (result.not_modified, result.etag, result.last_modified) == (True, '"v2"', None)


# --- failures ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "reason"),
    [(500, "HTTP 500 Internal Server Error"), (404, "HTTP 404 Not Found"), (403, "HTTP 403")],
)
async def test_an_error_status_fails_the_source(status: int, reason: str) -> None:
    error = await fetch_error(lambda request: httpx.Response(status, text="nope"))
    assert error.reason.startswith(reason)


@pytest.mark.parametrize(
    "exception",
    [httpx.ReadTimeout("read timed out"), httpx.ConnectTimeout("connect timed out")],
)
async def test_a_timeout_fails_the_source(exception: httpx.TimeoutException) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exception

    assert (await fetch_error(handler)).reason == "timed out"


async def test_a_connection_error_fails_the_source() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    error = await fetch_error(handler)
    assert error.reason == "cannot fetch: [Errno 111] Connection refused"


async def test_an_oversized_streamed_body_is_cut_off() -> None:
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        chunk = b"<" * 65536
        for _ in range(2 * MAX_FEED_BYTES // len(chunk)):
            sent += len(chunk)
            yield chunk

    error = await fetch_error(lambda request: httpx.Response(200, content=body()))
    assert error.reason == "feed larger than 10 MB"
    assert sent <= MAX_FEED_BYTES + 65536  # stopped reading right past the cap


async def test_an_oversized_declared_length_is_refused_before_reading() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=b"<rss/>", headers={"Content-Length": str(MAX_FEED_BYTES + 1)}
        )

    assert (await fetch_error(handler)).reason == "feed larger than 10 MB"


async def test_a_body_of_exactly_the_cap_is_read() -> None:
    body = JSON_FEED + b" " * (MAX_FEED_BYTES - len(JSON_FEED))
    result = await fetch(respond(body, "application/feed+json"))
    assert len(result.pages) == 2


@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        (
            b'<?xml version="1.0"?><rss version="2.0"><channel><ti',
            "application/rss+xml",
            "invalid feed: ",
        ),
        (b"not xml at all", "application/xml", "invalid feed: "),
        (b"<html><body><p>a web page</p></body></html>", "text/html", "invalid feed: "),
        (b"", "application/atom+xml", "not an Atom, RSS or JSON feed"),
        (b"{not json", "application/feed+json", "invalid JSON: "),
        (b"[1, 2]", "application/json", "not a JSON Feed: no items list"),
        (b'{"items": {}}', "application/json", "not a JSON Feed: no items list"),
        (b"[" * 100_000, "application/json", "invalid JSON: "),
    ],
)
async def test_an_unreadable_body_fails_the_source(
    body: bytes, content_type: str, reason: str
) -> None:
    error = await fetch_error(respond(body, content_type))
    assert error.reason.startswith(reason)


async def test_redirects_are_followed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/feed":
            return httpx.Response(301, headers={"Location": "https://feeds.example.org/moved"})
        if request.url.path == "/moved":
            return httpx.Response(302, headers={"Location": "/final.json"})
        return httpx.Response(200, content=JSON_FEED, headers={"ETag": '"final"'})

    result = await fetch(handler)
    assert len(result.pages) == 2
    assert result.etag == '"final"'
    assert {p.source for p in result.pages} == {URL}  # the configured URL names the source


async def test_a_redirect_loop_fails_the_source() -> None:
    hops = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal hops
        hops += 1
        return httpx.Response(302, headers={"Location": f"/hop{hops}"})

    error = await fetch_error(handler)
    assert error.reason == f"more than {MAX_REDIRECTS} redirects"
    assert hops == MAX_REDIRECTS + 1


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://feeds.example.org/feed", "cannot fetch: Request URL has an unsupported protocol"),
        ("http://[::1/feed", "invalid URL: "),
    ],
)
async def test_a_url_httpx_cannot_fetch_fails_the_source(url: str, reason: str) -> None:
    async with make_feed_client() as client:  # fails before any connection is made
        assert (await failure_reason(client, url)).startswith(reason)


async def test_the_client_is_configured() -> None:
    async with make_feed_client() as client:
        assert client.timeout == FEED_TIMEOUT
        assert client.follow_redirects is False  # fetch_feed follows them, checking each hop
        assert client.headers["User-Agent"] == f"ai-trend-notifier/{bot.__version__}"
        assert client.headers["Accept-Encoding"] == "gzip, deflate"


# --- a real server on 127.0.0.1 ---------------------------------------------------------------


@dataclass
class LocalFeedServer:
    base: str
    release: threading.Event
    requests: list[dict[str, str]] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        state = self.server.state
        state.requests.append({"path": self.path, **dict(self.headers.items())})
        try:
            if self.path == "/slow":
                state.release.wait(10)  # never answers before the client gives up
                return
            if self.path != "/rss":
                self.send_error(404)
                return
            if self.headers.get("If-None-Match") == '"rss-1"':
                self.send_response(304)
                self.send_header("ETag", '"rss-1"')
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml; charset=utf-8")
            self.send_header("Content-Length", str(len(RSS)))
            self.send_header("ETag", '"rss-1"')
            self.end_headers()
            self.wfile.write(RSS)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (the timeout test)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    state: LocalFeedServer


@pytest.fixture
def local_server() -> Iterator[LocalFeedServer]:
    server = _Server(("127.0.0.1", 0), _Handler)
    host, port = server.server_address[:2]
    server.state = LocalFeedServer(base=f"http://{host!s}:{port}", release=threading.Event())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.state
    finally:
        server.state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


async def test_real_server_round_trip_with_etag(local_server: LocalFeedServer) -> None:
    url = f"{local_server.base}/rss"
    async with make_feed_client() as client:
        first = await fetch_feed(client, url, etag=None, last_modified=None, default_lang="en")
        again = await fetch_feed(
            client, url, etag=first.etag, last_modified=first.last_modified, default_lang="en"
        )
    assert [p.key for p in first.pages] == ["note-2608.17310", "https://notes.example.org/no-guid"]
    assert first.etag == '"rss-1"'
    assert again == FeedResult(
        not_modified=True, pages=[], skipped=[], etag='"rss-1"', last_modified=None
    )
    assert local_server.requests[0]["User-Agent"] == f"ai-trend-notifier/{bot.__version__}"
    assert local_server.requests[1]["If-None-Match"] == '"rss-1"'


async def test_real_server_timeout(local_server: LocalFeedServer) -> None:
    async with httpx.AsyncClient(timeout=httpx.Timeout(0.3)) as client:
        reason = await failure_reason(client, f"{local_server.base}/slow")
    assert reason == "timed out"


async def test_real_server_not_found(local_server: LocalFeedServer) -> None:
    async with make_feed_client() as client:
        reason = await failure_reason(client, f"{local_server.base}/missing")
    assert reason == "HTTP 404 Not Found"


async def test_connection_refused() -> None:
    port = free_port()  # a port that was free a moment ago and has no listener
    async with make_feed_client() as client:
        reason = await failure_reason(client, f"http://127.0.0.1:{port}/rss")
    assert reason.startswith("cannot fetch: ")


# --- redirects: same host, never from public to internal ------------------------------------


def redirect_to(location: str, *, status: int = 302) -> Handler:
    """The configured URL redirects to ``location``; anything else is the JSON feed."""
    seen: list[httpx.URL] = []
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        requests.append(request)
        if request.url.path == "/feed":
            return httpx.Response(status, headers={"Location": location})
        return httpx.Response(200, content=JSON_FEED, headers={"Content-Type": "application/json"})

    handler.seen = seen  # type: ignore[attr-defined]
    handler.requests = requests  # type: ignore[attr-defined]
    return handler


async def test_a_redirect_to_another_host_is_refused_by_default() -> None:
    handler = redirect_to("https://elsewhere.example.net/feed.json")
    error = await fetch_error(handler)
    assert error.reason == (
        "redirect to another host (elsewhere.example.net) refused; "
        "FEED_ALLOW_CROSS_HOST_REDIRECTS=true allows it"
    )
    assert [u.host for u in handler.seen] == ["feeds.example.org"]  # type: ignore[attr-defined]


async def test_a_redirect_to_another_public_host_is_followed_when_allowed() -> None:
    handler = redirect_to("https://93.184.216.34/feed.json")  # an address literal: no DNS
    result = await fetch(handler, allow_cross_host=True)
    assert len(result.pages) == 2


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.1:8080/admin",
        "http://[::1]/feed",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/feed",
        "http://192.168.1.1/feed",
        "http://localhost/feed",  # a name that resolves to loopback
    ],
)
async def test_a_redirect_to_an_internal_address_is_refused_even_when_cross_host_is_allowed(
    location: str,
) -> None:
    handler = redirect_to(location)
    error = await fetch_error(handler, url="https://93.184.216.34/feed", allow_cross_host=True)
    assert "loopback, link-local or private address" in error.reason
    assert len(handler.seen) == 1  # type: ignore[attr-defined]


async def test_a_feed_configured_on_an_internal_address_may_redirect_to_another() -> None:
    handler = redirect_to("http://127.0.0.2/feed.json")
    result = await fetch(handler, url="http://127.0.0.1/feed", allow_cross_host=True)
    assert len(result.pages) == 2


async def test_a_redirect_to_another_scheme_is_refused() -> None:
    error = await fetch_error(redirect_to("file:///etc/passwd"))
    assert error.reason == "redirect to a URL that is not http(s)"


async def test_a_same_host_redirect_keeps_the_credentials_and_https() -> None:
    handler = redirect_to("/feed.json", status=301)
    await fetch(handler, url="https://reader:pa55@feeds.example.org/feed")
    final = handler.requests[-1]  # type: ignore[attr-defined]
    basic = "Basic " + base64.b64encode(b"reader:pa55").decode()
    assert (final.url.path, final.headers["Authorization"]) == ("/feed.json", basic)
    assert not final.url.userinfo  # sent as a header, never in the URL


async def test_a_secret_after_a_semicolon_reaches_the_server_as_configured() -> None:
    """``?page=2;token=T0K3N``: the public name has neither (some servers split at ";"), and
    the request carries the piece as it was written."""
    handler = redirect_to("/feed.json", status=301)
    url = "https://feeds.example.org/feed?page=2;token=T0K3N&lang=ko"
    assert parse_source(url).public == "https://feeds.example.org/feed?lang=ko"
    await fetch(handler, url=url)
    first = handler.requests[0]  # type: ignore[attr-defined]
    assert sorted(first.url.query.decode().split("&")) == ["lang=ko", "page=2;token=T0K3N"]


async def test_a_redirect_from_https_to_http_does_not_carry_the_credentials() -> None:
    handler = redirect_to("http://feeds.example.org/feed.json")
    await fetch(handler, url="https://reader:pa55@feeds.example.org/feed?token=T0K3N")
    first, last = handler.requests  # type: ignore[attr-defined]
    assert "Authorization" in first.headers
    assert last.url.scheme == "http" and "Authorization" not in last.headers
    assert "T0K3N" not in str(last.url)


async def test_a_cross_host_redirect_does_not_carry_the_credentials() -> None:
    handler = redirect_to("https://93.184.216.34/feed.json")
    await fetch(
        handler,
        url="https://reader:pa55@feeds.example.org/feed?token=T0K3N",
        allow_cross_host=True,
    )
    first, last = handler.requests  # type: ignore[attr-defined]
    assert "Authorization" in first.headers and "token=T0K3N" in str(first.url)
    assert "Authorization" not in last.headers and "T0K3N" not in str(last.url)
    assert last.url.userinfo == b""


# --- compressed bodies: inflated a piece at a time against the cap ----------------------------


def streamed(body: bytes, encoding: str) -> Handler:
    """A response streamed as a server sends it (so the client reads it chunk by chunk)."""

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            content=chunks(),
            headers={"Content-Type": "application/feed+json", "Content-Encoding": encoding},
        )

    return handler


def gzip_bomb(inflated: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1024 * 1024)
    return b"".join(packer.compress(block) for _ in range(inflated // len(block))) + packer.flush()


async def test_a_gzip_bomb_never_inflates_past_the_cap() -> None:
    bomb = gzip_bomb(256 * 1024 * 1024)  # 256 MB of zeros in about 250 KB
    tracemalloc.start()
    try:
        error = await fetch_error(streamed(bomb, "gzip"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.reason == "feed larger than 10 MB"
    # The body held up to the cap, one piece and the compressed input; a single 64 KB chunk
    # of this bomb inflates to about 64 MB.
    assert peak < 3 * MAX_FEED_BYTES


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [
        ("gzip", lambda b: gzip.compress(b)),
        ("x-gzip", lambda b: gzip.compress(b)),
        ("deflate", lambda b: zlib.compress(b)),  # zlib-wrapped, as RFC 9110 says
        ("deflate", lambda b: zlib.compress(b, wbits=-zlib.MAX_WBITS)),  # raw, as some send
        ("gzip", lambda b: gzip.compress(b[:100]) + gzip.compress(b[100:])),  # two members
        ("identity", lambda b: b),
    ],
)
async def test_compressed_feeds_are_read(encoding: str, pack: Callable[[bytes], bytes]) -> None:
    result = await fetch(streamed(pack(JSON_FEED), encoding))
    assert len(result.pages) == 2


@pytest.mark.parametrize(
    ("encoding", "body", "reason"),
    [
        ("br", b"\x0b\x02\x80", "unsupported Content-Encoding: br"),
        ("gzip, gzip", gzip.compress(gzip.compress(JSON_FEED)), "unsupported Content-Encoding"),
        ("gzip", b"not gzip at all", "invalid compressed body"),
        ("gzip", gzip.compress(JSON_FEED)[:-20], "invalid compressed body: cut short"),
    ],
)
async def test_a_body_that_cannot_be_inflated_fails_the_source(
    encoding: str, body: bytes, reason: str
) -> None:
    error = await fetch_error(streamed(body, encoding))
    assert error.reason.startswith(reason)


# --- sizes: validators and entries ----------------------------------------------------------


async def test_an_oversized_etag_is_not_kept() -> None:
    result = await fetch(
        respond(JSON_FEED, "application/json", ETag='"' + "e" * MAX_ETAG_CHARS + '"')
    )
    assert result.etag is None and len(result.pages) == 2


def json_feed(count: int, **item: object) -> bytes:
    items = [{"id": f"urn:entry:{n}", "title": f"Entry {n}", **item} for n in range(count)]
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "items": items}).encode()


async def test_a_feed_keeps_its_first_entries_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = "https://reader:pa55@feeds.example.org/big?token=T0K3N"
    with caplog.at_level(logging.WARNING, logger="bot.sources"):
        result = await fetch(respond(json_feed(5000), "application/feed+json"), url=url)
    assert [p.key for p in result.pages] == [f"urn:entry:{n}" for n in range(MAX_FEED_ENTRIES)]
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.sources"]
    assert lines == ["https://feeds.example.org/big: 3000 entries dropped, the first 2000 kept"]


async def test_an_entry_with_too_many_tags_keeps_fifty(caplog: pytest.LogCaptureFixture) -> None:
    body = json_feed(1, tags=[f"t{n}" for n in range(10_000)])
    with caplog.at_level(logging.WARNING, logger="bot.sources"):
        (only,) = (await fetch(respond(body, "application/feed+json"))).pages
    assert only.tags == tuple(f"t{n}" for n in range(50))
    assert [r.getMessage() for r in caplog.records if r.name == "bot.sources"] == [
        f"{URL}: pages with more than 50 tags: 1, the first 50 of each kept, 9950 tags dropped "
        "(first page: urn:entry:0)"
    ]


async def test_a_huge_entry_id_becomes_a_bounded_stable_key() -> None:
    body = json_feed(1, id="urn:" + "i" * 5000, url="https://w/" + "u" * 3000)
    first = (await fetch(respond(body, "application/feed+json"))).pages
    again = (await fetch(respond(body, "application/feed+json"))).pages
    assert len(first[0].key) == 1000 and first[0].key == again[0].key
    assert first[0].url is None


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
_ITEM_KEYS = st.sampled_from(
    [
        "id",
        "url",
        "title",
        "summary",
        "content_text",
        "content_html",
        "tags",
        "language",
        "date_published",
        "date_modified",
    ]
)


@given(
    items=st.lists(
        st.dictionaries(_ITEM_KEYS, _JSON_VALUES, max_size=8) | _JSON_VALUES, max_size=6
    ),
    raw=st.binary(max_size=300),
)
@settings(max_examples=150, deadline=None)
def test_parsing_any_body_gives_bounded_pages_or_a_source_error(
    items: list[object], raw: bytes
) -> None:
    document = json.dumps({"version": "https://jsonfeed.org/version/1.1", "items": items})
    for body, content_type in (
        (document.encode(), "application/feed+json"),
        (raw, "application/xml"),
    ):
        try:
            found, _ = parse_feed(
                body, source=URL, content_type=content_type, location=URL, default_lang="en"
            )
        except SourceError:
            continue
        for page in found:
            assert len(page.key) <= 1000 and len(page.tags) <= 50
            assert page.url is None or len(page.url) <= 2000
