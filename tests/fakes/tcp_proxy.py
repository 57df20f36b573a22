"""A TCP proxy between the bot and a real database server, that a test can cut and restore.

Cut, it behaves as a stopped server does to its clients: the connections open are reset
(the client reads EOF or ECONNRESET mid-query) and a new connect is refused (nothing listens
on the port). Restored, it listens on the same port again. The database behind it is never
touched, so a server shared with others keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import TracebackType

CHUNK = 65536


class TcpProxy:
    def __init__(self, *, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self.connections = 0  # accepted since the start, for a test to see traffic

    async def __aenter__(self) -> TcpProxy:
        with socket.socket() as probe:  # a free port, kept across cuts
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        await self.restore()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.cut()

    async def restore(self) -> None:
        """Listen again: the database "started"."""
        if self._server is None:
            self._server = await asyncio.start_server(
                self._serve, "127.0.0.1", self.port, reuse_address=True
            )

    async def cut(self) -> None:
        """Refuse new connections and reset those open: the database "stopped"."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            transport = writer.transport
            if isinstance(transport, asyncio.Transport):
                transport.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if server is not None:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        pumps = [
            asyncio.create_task(self._pump(reader, up_writer)),
            asyncio.create_task(self._pump(up_reader, writer)),
        ]
        self._tasks.update(pumps)
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            self._tasks.difference_update(pumps)
            for w in (writer, up_writer):
                self._writers.discard(w)
                w.transport.abort()

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await source.read(CHUNK):
                sink.write(data)
                await sink.drain()
