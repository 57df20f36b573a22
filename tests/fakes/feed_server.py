"""A feed server on 127.0.0.1 for tests: serves bodies by path, and hangs on request.

It speaks plain HTTP/1.1 through aiohttp: a served body gets its ``Content-Type`` and
``ETag``, and a request whose ``If-None-Match`` matches gets ``304 Not Modified`` with no
body (RFC 9110, section 13.1.2 and 15.4.5). A path marked hanging accepts the request and
never answers until :meth:`FeedServer.release_all` (or the server stops), as a stalled
upstream does; the server counts the requests hanging at once. A body served with
``basic``/``query`` set needs those credentials, as a private feed does.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from types import TracebackType

from aiohttp import web


@dataclass(frozen=True, slots=True)
class Served:
    body: bytes
    content_type: str
    etag: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    # Answered only to a request with these HTTP Basic credentials and query parameters;
    # anything else gets 401 with a Basic challenge (RFC 9110, 11.6.1 and 15.5.2; RFC 7617).
    basic: tuple[str, str] | None = None
    query: tuple[tuple[str, str], ...] = ()


class FeedServer:
    def __init__(self) -> None:
        self._served: dict[str, Served] = {}
        self._hanging: set[str] = set()
        self._redirects: dict[str, str] = {}
        self._release = asyncio.Event()
        self._changed = asyncio.Condition()
        self.in_flight = 0  # requests hanging now
        self.most_in_flight = 0
        self.paths: list[str] = []  # path and query of every request, in order
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    def serve(self, path: str, served: Served) -> str:
        """Answer GET ``path`` with ``served``; returns its URL."""
        self._served[path] = served
        return self.base_url + path

    def redirect(self, path: str, location: str) -> str:
        """GET ``path`` answers ``302 Found`` to ``location`` (RFC 9110, section 15.4.3)."""
        self._redirects[path] = location
        return self.base_url + path

    def hang(self, path: str) -> str:
        """GET ``path`` never answers until released; returns its URL."""
        self._hanging.add(path)
        return self.base_url + path

    def release_all(self) -> None:
        self._release.set()

    async def wait_in_flight(self, count: int, *, seconds: float = 30.0) -> None:
        """Until ``count`` requests hang at once (a deadline, not a sleep)."""
        async with asyncio.timeout(seconds), self._changed:
            await self._changed.wait_for(lambda: self.in_flight >= count)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.paths.append(request.path_qs)
        if request.path in self._hanging:
            async with self._changed:
                self.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, self.in_flight)
                self._changed.notify_all()
            try:
                await self._release.wait()
            finally:
                self.in_flight -= 1
            return web.Response(status=503)
        if request.path in self._redirects:
            return web.Response(status=302, headers={"Location": self._redirects[request.path]})
        served = self._served.get(request.path)
        if served is None:
            return web.Response(status=404)
        if not _authorized(request, served):
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="feed"'})
        if served.etag is not None and request.headers.get("If-None-Match") == served.etag:
            return web.Response(status=304, headers={"ETag": served.etag})
        headers = dict(served.headers)
        if served.etag is not None:
            headers["ETag"] = served.etag
        return web.Response(
            body=served.body,
            content_type=None,
            headers={"Content-Type": served.content_type, **headers},
        )

    async def __aenter__(self) -> FeedServer:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release_all()
        if self._runner is not None:
            await self._runner.cleanup()


def _authorized(request: web.Request, served: Served) -> bool:
    if served.basic is not None:
        expected = base64.b64encode(":".join(served.basic).encode()).decode()
        if request.headers.get("Authorization") != f"Basic {expected}":
            return False
    return all(request.query.get(name) == value for name, value in served.query)
