"""Atom, RSS 2.0 and JSON Feed 1.1 sources over HTTP(S): fetching a feed.

A fetch is conditional (``If-None-Match`` / ``If-Modified-Since``): an unchanged feed
answers 304 and nothing is parsed. Redirects are followed here, not by httpx, so each hop
is checked: it stays on the configured host unless cross-host redirects are allowed, and
never leads from a public host to a loopback, link-local or private address. The body is
streamed and cut off at :data:`MAX_FEED_BYTES`, counted after gzip or deflate, which is
undone here a bounded piece at a time (a gzip bomb never inflates past the cap). The body
fetched is parsed into pages by :func:`bot.sources.entries.parse_feed`.

A feed's credentials (:class:`bot.rules.sources.Credentials`) are applied to each request by
:class:`SourceAuth`, an ``httpx.Auth`` flow, and to no request for another host; the URL
the fetch is built from, the redirects it follows and the base its relative links and ids
resolve against are the feed's public identity, which carries none of them.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import zlib
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, replace

import httpx

from bot import __version__
from bot.errors import SourceError
from bot.models import Page, Skipped
from bot.rules.sources import Credentials, SourceSpec, parse_source, public_identity
from bot.rules.urls import is_internal_address
from bot.sources.entries import parse_feed, short

MAX_FEED_BYTES = 10 * 1024 * 1024  # real feeds are well under 1 MB; more is a wrong URL
FEED_TIMEOUT = httpx.Timeout(20.0, connect=10.0)  # per network operation
FEED_DEADLINE_SECONDS = 60.0  # a whole fetch, so a server trickling bytes cannot stall a poll
MAX_REDIRECTS = 5  # http -> https -> canonical host leaves room; more is a loop
USER_AGENT = f"ai-trend-notifier/{__version__}"
ACCEPT_ENCODING = "gzip, deflate"  # the encodings undone here, each against the cap
INFLATE_PIECE = 64 * 1024  # most bytes one step of decompression may produce
# sources.etag and sources.last_modified (bot/store/schema.py): a longer validator from
# the server is not kept, and the next fetch is unconditional.
MAX_ETAG_CHARS = 1000
MAX_LAST_MODIFIED_CHARS = 200

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class FeedResult:
    """The outcome of one fetch.

    ``etag`` and ``last_modified`` are the validators to send next time: the response's,
    or the ones sent when a 304 carried none.
    """

    not_modified: bool
    pages: list[Page]
    skipped: list[Skipped]
    etag: str | None
    last_modified: str | None


class SourceAuth(httpx.Auth):
    """A source's credentials, applied to a request for the source's own host alone (and,
    for a feed configured on ``https``, over ``https`` alone): the user info as HTTP Basic
    (RFC 7617), the secret query parameters set on the URL. The one place a feed's
    credentials are unwrapped."""

    def __init__(self, credentials: Credentials, *, host: str, secure: bool = False) -> None:
        self._credentials = credentials
        self._host = host.lower()
        self._secure = secure

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        downgraded = self._secure and request.url.scheme != "https"
        if request.url.host.lower() == self._host and not downgraded:
            self._apply(request)
        yield request

    def _apply(self, request: httpx.Request) -> None:
        basic = self._credentials.basic()
        if basic is not None:
            pair = ":".join(basic).encode("utf-8")
            request.headers["Authorization"] = f"Basic {base64.b64encode(pair).decode()}"
        if self._credentials.query:
            names = {name for name, _ in self._credentials.query}
            pieces = [
                piece
                for piece in request.url.query.decode("ascii", "replace").split("&")
                if piece and piece.partition("=")[0] not in names
            ]
            pieces += [f"{name}={value.reveal()}" for name, value in self._credentials.query]
            request.url = request.url.copy_with(query="&".join(pieces).encode("utf-8"))


def make_feed_client(*, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An HTTP client for :func:`fetch_feed`: timeouts, redirects and User-Agent set.

    Args:
        transport: A transport to use instead of the network (tests pass an
            ``httpx.MockTransport``).

    Returns:
        A client the caller owns and closes.
    """
    return httpx.AsyncClient(
        transport=transport,
        timeout=FEED_TIMEOUT,
        follow_redirects=False,  # followed by fetch_feed, which checks every hop
        max_redirects=MAX_REDIRECTS,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
    )


async def fetch_feed(
    client: httpx.AsyncClient,
    source: SourceSpec | str,
    *,
    etag: str | None,
    last_modified: str | None,
    default_lang: str,
    allow_cross_host: bool = False,
) -> FeedResult:
    """Fetch and parse one feed, conditionally, within :data:`FEED_DEADLINE_SECONDS`.

    Args:
        client: The HTTP client (see :func:`make_feed_client`).
        source: The feed, parsed from ``WIKI_SOURCES`` (or as configured, parsed here);
            its public identity is the source name of its pages.
        etag: The ``ETag`` of the previous fetch, if any.
        last_modified: The ``Last-Modified`` of the previous fetch, if any.
        default_lang: The language of entries whose feed names none of the bot's.
        allow_cross_host: Follow a redirect to another host (``FEED_ALLOW_CROSS_HOST_REDIRECTS``).

    Returns:
        On 304, ``not_modified`` and no pages; else the feed's pages and the entries
        that could not be used.

    Raises:
        SourceError: The feed could not be fetched (status, timeout, connection, size)
            or is not a readable Atom, RSS or JSON feed.
    """
    if isinstance(source, SourceSpec):
        spec = source
    else:
        try:
            spec = parse_source(source)
        except ValueError as exc:
            raise SourceError(public_identity(source), f"invalid URL: {exc}") from None
    url = spec.public
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    try:
        async with asyncio.timeout(FEED_DEADLINE_SECONDS):
            response, body, location = await _get(
                client, spec, headers=headers, allow_cross_host=allow_cross_host
            )
    except (TimeoutError, httpx.TimeoutException):
        raise SourceError(url, "timed out") from None
    except httpx.HTTPError as exc:
        raise SourceError(url, f"cannot fetch: {_describe(exc)}") from None
    except httpx.InvalidURL as exc:
        raise SourceError(url, f"invalid URL: {exc}") from None

    new_etag = _validator(response.headers.get("ETag"), MAX_ETAG_CHARS)
    new_last_modified = _validator(response.headers.get("Last-Modified"), MAX_LAST_MODIFIED_CHARS)
    if response.status_code == httpx.codes.NOT_MODIFIED:
        return FeedResult(
            not_modified=True,
            pages=[],
            skipped=[],
            etag=new_etag or etag,
            last_modified=new_last_modified or last_modified,
        )
    pages, skipped = await asyncio.to_thread(
        parse_feed,
        body,
        source=url,
        content_type=response.headers.get("Content-Type", ""),
        location=location,
        default_lang=default_lang,
    )
    pages = [_without(spec.credentials)(page) for page in pages]
    return FeedResult(
        not_modified=False,
        pages=pages,
        skipped=skipped,
        etag=new_etag,
        last_modified=new_last_modified,
    )


async def _get(
    client: httpx.AsyncClient,
    spec: SourceSpec,
    *,
    headers: Mapping[str, str],
    allow_cross_host: bool,
) -> tuple[httpx.Response, bytes, str]:
    """The response, its body and the public URL it came from (where a redirect led,
    without user info or secret query values: the base of the feed's relative links)."""
    url = spec.public
    origin = httpx.URL(url.split("#", 1)[0])
    auth = SourceAuth(spec.credentials, host=origin.host, secure=origin.scheme == "https")
    target = origin
    for _hop in range(MAX_REDIRECTS + 1):
        request = client.build_request("GET", target, headers=headers)
        response = await client.send(request, stream=True, follow_redirects=False, auth=auth)
        try:
            if response.status_code in REDIRECT_STATUSES and "Location" in response.headers:
                target = await redirect_target(
                    url,
                    origin=origin,
                    base=target,
                    response=response,
                    allow_cross_host=allow_cross_host,
                )
                continue
            location = public_identity(str(target))
            if response.status_code == httpx.codes.NOT_MODIFIED:
                return response, b"", location
            if not response.is_success:
                phrase = response.reason_phrase or "error"
                raise SourceError(url, f"HTTP {response.status_code} {phrase}")
            return response, await _read_body(url, response), location
        finally:
            await response.aclose()
    raise SourceError(url, f"more than {MAX_REDIRECTS} redirects")


async def redirect_target(
    url: str,
    *,
    origin: httpx.URL,
    base: httpx.URL,
    response: httpx.Response,
    allow_cross_host: bool,
) -> httpx.URL:
    """Where a redirect leads, once it is allowed; a SourceError says why it is not.

    The one redirect policy of every source fetched over HTTP (feeds here, git
    repositories in bot/sources/git.py): the configured host, or with ``allow_cross_host``
    another host, never from a public host to a loopback, link-local or private address.
    """
    try:
        # Against the URL as requested without its credentials (the sent one has the token).
        target = base.join(response.headers["Location"])
    except (httpx.InvalidURL, ValueError):
        raise SourceError(url, "redirect to an invalid URL") from None
    if target.scheme not in ("http", "https") or not target.host:
        raise SourceError(url, "redirect to a URL that is not http(s)")
    if target.host.lower() == origin.host.lower():
        return target  # the same server: SourceAuth gives it the same credentials
    if not allow_cross_host:
        raise SourceError(
            url,
            f"redirect to another host ({target.host}) refused; "
            "FEED_ALLOW_CROSS_HOST_REDIRECTS=true allows it",
        )
    if await _is_internal(target, unresolved=True) and not await _is_internal(
        origin, unresolved=False
    ):
        raise SourceError(
            url, f"redirect to a loopback, link-local or private address ({target.host}) refused"
        )
    return target


async def _is_internal(url: httpx.URL, *, unresolved: bool) -> bool:
    """True when ``url``'s host is, or resolves to, an address that is not public.

    A host that does not resolve counts as ``unresolved`` says: internal for a redirect's
    target (nothing is known of where it leads), public for the configured URL.
    """
    host = url.host
    if is_internal_address(host):
        return True
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, url.port or (443 if url.scheme == "https" else 80), type=socket.SOCK_STREAM
        )
    except (OSError, UnicodeError):
        return unresolved
    return any(is_internal_address(str(info[4][0])) for info in infos)


async def _read_body(url: str, response: httpx.Response) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_FEED_BYTES:
        raise SourceError(url, _too_large())
    if response.is_stream_consumed:  # a transport that hands over a body held in memory
        if len(response.content) > MAX_FEED_BYTES:
            raise SourceError(url, _too_large())
        return response.content
    inflater = _Inflater.for_encoding(url, response.headers.get("Content-Encoding", ""))
    body = bytearray()
    received = 0
    async for chunk in response.aiter_raw():  # as sent: decoded below, a piece at a time
        received += len(chunk)
        if received > MAX_FEED_BYTES:
            raise SourceError(url, _too_large())
        body += chunk if inflater is None else inflater.feed(chunk, room=MAX_FEED_BYTES - len(body))
        if len(body) > MAX_FEED_BYTES:
            raise SourceError(url, _too_large())
    if inflater is not None:
        inflater.finish()
    return bytes(body)


class _Inflater:
    """gzip or deflate undone incrementally: no step yields more than the room left + 1."""

    def __init__(self, url: str, encoding: str) -> None:
        self._url = url
        self._deflate = encoding == "deflate"
        self._wbits = zlib.MAX_WBITS if self._deflate else 16 + zlib.MAX_WBITS
        self._inflate = zlib.decompressobj(self._wbits)
        self._started = False

    @classmethod
    def for_encoding(cls, url: str, header: str) -> _Inflater | None:
        codings = [c.strip().lower() for c in header.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if not codings:
            return None
        if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
            return cls(url, codings[0])
        raise SourceError(url, f"unsupported Content-Encoding: {short(header, 40)}")

    def feed(self, data: bytes, *, room: int) -> bytes:
        out = bytearray()
        while data and len(out) <= room:
            try:
                piece = self._inflate.decompress(data, min(INFLATE_PIECE, room + 1 - len(out)))
            except zlib.error:
                if self._deflate and not self._started:  # raw deflate, without the zlib header
                    self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._started = True
                    continue
                raise SourceError(self._url, "invalid compressed body") from None
            self._started = True
            out += piece
            if self._inflate.eof:  # a gzip body may hold several members
                data = self._inflate.unused_data
                if data:
                    self._inflate = zlib.decompressobj(self._wbits)
            else:
                data = self._inflate.unconsumed_tail
        return bytes(out)

    def finish(self) -> None:
        if not self._inflate.eof and self._started:
            raise SourceError(self._url, "invalid compressed body: cut short")


def _without(credentials: Credentials) -> Callable[[Page], Page]:
    """A page as it may be kept: a feed that echoes the credentials it was fetched with
    (an absolute link or id with the token in it) has them scrubbed from its key and
    texts, and loses a link that holds them. No credential, nothing changes."""
    secrets = credentials.values()

    def clean(page: Page) -> Page:
        texts = "\n".join([page.key, page.url or "", *(f"{t.title}\n{t.tldr}" for t in page.texts)])
        if not any(secret in texts for secret in secrets):
            return page
        url = page.url if page.url and not any(s in page.url for s in secrets) else None
        return replace(
            page,
            key=credentials.scrub(page.key),
            url=url,
            texts=tuple(
                replace(t, title=credentials.scrub(t.title), tldr=credentials.scrub(t.tldr))
                for t in page.texts
            ),
        )

    return clean


def _validator(value: str | None, limit: int) -> str | None:
    return value if value is not None and len(value) <= limit else None


def _describe(exc: httpx.HTTPError) -> str:
    return short(str(exc) or type(exc).__name__)


def _too_large() -> str:
    return f"feed larger than {MAX_FEED_BYTES // (1024 * 1024)} MB"
