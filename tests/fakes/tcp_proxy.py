"""A TCP proxy between the bot and a real database server, that a test can cut and restore.

Cut, it behaves as a stopped server does to its clients: the connections open are reset
(the client reads EOF or ECONNRESET mid-query) and a new connect is refused (nothing listens
on the port). Restored, it listens on the same port again. The database behind it is never
touched, so a server shared with others keeps running.

Shut down (:meth:`TcpProxy.shut_down`), it answers as a PostgreSQL server does while it
shuts down (``pg_ctl stop -m fast``): the sessions open get FATAL 57P01 and are closed, a
new connect is taken and answered FATAL 57P03 "the database system is shutting down". The
messages are the protocol's own (PostgreSQL documentation, "Frontend/Backend Protocol":
"Message Flow", start-up and SSLRequest; "Message Formats", ErrorResponse).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from types import TracebackType

CHUNK = 65536
# The start-up packets that ask for encryption first ("Message Formats": SSLRequest,
# GSSENCRequest): a server that will not encrypt answers one byte, ``N``.
ENCRYPTION_REQUESTS = frozenset({80877103, 80877104})
ADMIN_SHUTDOWN = ("57P01", "terminating connection due to administrator command")
SHUTTING_DOWN = ("57P03", "the database system is shutting down")


def error_response(code: str, message: str) -> bytes:
    """A FATAL ErrorResponse ("Message Formats": ``E``, its length, then the fields, each a
    type byte and a C string, and a final zero byte)."""
    fields = b"".join(
        kind + text.encode() + b"\0"
        for kind, text in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", code), (b"M", message))
    )
    body = fields + b"\0"
    return b"E" + struct.pack("!I", len(body) + 4) + body


class TcpProxy:
    def __init__(self, *, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._clients: set[asyncio.StreamWriter] = set()
        self._shutting_down = False
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
        self._shutting_down = False
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

    async def shut_down(self) -> None:
        """Answer as a PostgreSQL server shutting down: the sessions open are ended with
        FATAL 57P01, new connects refused with FATAL 57P03 (until :meth:`restore`)."""
        self._shutting_down = True
        clients = list(self._clients)
        for task in list(self._tasks):  # nothing more of the server's reaches a client
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for writer in clients:
            with contextlib.suppress(OSError, RuntimeError):
                writer.write(error_response(*ADMIN_SHUTDOWN))
                writer.close()

    async def _refuse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read the start-up packet (after declining encryption) and answer FATAL 57P03."""
        with contextlib.suppress(OSError, asyncio.IncompleteReadError, struct.error):
            while True:
                length, code = struct.unpack("!II", await reader.readexactly(8))
                await reader.readexactly(max(0, length - 8))
                if code not in ENCRYPTION_REQUESTS:
                    break
                writer.write(b"N")
                await writer.drain()
            writer.write(error_response(*SHUTTING_DOWN))
            await writer.drain()
        writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self._shutting_down:
            await self._refuse(reader, writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        self._clients.add(writer)
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
            self._clients.discard(writer)
            for w in (writer, up_writer):
                self._writers.discard(w)
                if w is not writer or not self._shutting_down:  # else closed after its FATAL
                    w.transport.abort()

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await source.read(CHUNK):
                sink.write(data)
                await sink.drain()
