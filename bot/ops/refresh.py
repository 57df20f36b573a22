"""``POST /hooks/refresh``: a push to the wiki starts a poll at once.

The request is authenticated as GitHub, Gitea and GitLab's generic webhooks sign theirs:
``X-Hub-Signature-256: sha256=HEX``, an HMAC-SHA256 of the raw body under the shared
secret (``REFRESH_WEBHOOK_SECRET``), compared in constant time. A signed body seen in the
last five minutes is answered and not acted on again (a replay, or a host's redelivery).
Pushes that arrive within :data:`DEBOUNCE_SECONDS` of each other make one poll.

Any replica may receive the hook, but only the leader polls: the receiving replica leaves
a request in the store (a row of ``leases`` named :data:`REQUEST`), which the leader looks
for every :data:`CHECK_SECONDS`; on the leader itself the request is also signalled in
memory, so a single process answers at once.

A request outlives a database outage: the hook answers 503 when it cannot be stored, yet
the request is kept in memory until it is stored (another replica's) or a poll records
what it fetched (the leader's: a poll that met the database's error is tried again), so
the poll follows once the database answers again.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import hmac
import logging
import time
from collections import OrderedDict

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import dberrors
from bot.logs import Refusals
from bot.store import leases
from bot.util import utcnow

log = logging.getLogger("bot.service")

SIGNATURE_HEADER = "X-Hub-Signature-256"
SIGNATURE_PREFIX = "sha256="
REPLAY_SECONDS = 300.0  # a signed body is acted on once within this window
MAX_REMEMBERED = 10_000  # signatures remembered at most (oldest forgotten first)
DEBOUNCE_SECONDS = 1.0  # pushes within this of the first make one poll
CHECK_SECONDS = 1.0  # how often the leader looks for a request another replica left
REQUEST = "refresh:requested"  # the leases row that carries a request between replicas
REQUEST_TTL_SECONDS = 60.0
# A push whose poll met the database's error (away, full) is polled for again this long
# after, until a poll records it: the sources are not fetched every second of an outage.
AGAIN_SECONDS = 5.0
MAX_BODY_BYTES = 1024 * 1024  # a push event's body is a few KB; more is not a hook


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """Whether ``header`` is ``sha256=`` and the HMAC-SHA256 of ``body`` under ``secret``."""
    if not header or not header.startswith(SIGNATURE_PREFIX):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header[len(SIGNATURE_PREFIX) :].strip().lower())


class Refresh:
    """What the HTTP hook and the poll loop share in one process."""

    def __init__(self, *, engine: AsyncEngine, secret: str, holder: str) -> None:
        self._engine = engine
        self._secret = secret
        self._holder = holder[:128]
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._wanted = asyncio.Event()
        # A request this process took that the store refused (the database away): stored
        # by :meth:`resend` once it answers, unless this process carries it out first.
        self._unstored = False
        self._owed = False  # a poll is owed to a request wait() returned
        self._again_at = 0.0  # time.monotonic() before which a failed one is not tried again
        self.accepted = 0  # signed hooks acted on, in this process
        self._refused = Refusals(log, "refresh hook: unsigned or badly signed requests refused")
        self._unstorable = Refusals(
            log,
            "refresh hook: signed requests answered 503, their poll follows once the "
            "database answers",
        )

    def verify(self, body: bytes, header: str | None) -> bool | None:
        """True: a new signed request; None: a replay of one (answer, do nothing);
        False: unsigned or badly signed."""
        if not signature_ok(self._secret, body, header):
            return False
        now = time.monotonic()
        while self._seen and next(iter(self._seen.values())) < now - REPLAY_SECONDS:
            self._seen.popitem(last=False)
        digest = hashlib.sha256(body).digest()
        if digest in self._seen:
            return None
        self._seen[digest] = now
        while len(self._seen) > MAX_REMEMBERED:
            self._seen.popitem(last=False)
        return True

    async def hook(self, request: web.Request) -> web.StreamResponse:
        """``POST /hooks/refresh``: 202 for a signed push (a poll follows), 401 otherwise;
        503 when the database cannot store it (it is kept, and polled for once it
        answers). Refusals and unstored requests are logged at most once a minute."""
        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            return web.Response(status=413)
        body = await request.read()
        verdict = self.verify(body, request.headers.get(SIGNATURE_HEADER))
        if verdict is False:
            self._refused.refused()
            return web.Response(status=401)
        if verdict is True:
            try:
                await self.request()
            except Exception as exc:
                if not dberrors.is_outage(exc):
                    log.exception("refresh hook: the request could not be stored")
                else:
                    self._unstorable.refused(dberrors.reason(exc))
                return web.Response(status=503)
        return web.Response(status=202)

    async def request(self) -> None:
        """A poll is wanted: signal this process, and leave the request for the leader.
        Raises the database's error when the request cannot be stored (the hook answers
        503); it is kept meanwhile, and stored by :meth:`resend` or carried out here."""
        self.accepted += 1
        self._wanted.set()
        self._unstored = True
        await self._store()
        self._unstored = False

    async def resend(self) -> None:
        """Store the request the database refused when it came, if there is one (a
        replica that does not lead: the leader must learn of it). May raise the database's
        error; the next call tries again."""
        if self._unstored:
            await self._store()
            self._unstored = False

    async def _store(self) -> None:
        # Kept a minute: long enough for the leader to see it, short enough that a request
        # whose leader died with it does not outlive the next scheduled poll by much.
        expires = utcnow() + dt.timedelta(seconds=REQUEST_TTL_SECONDS)
        await leases.leave(self._engine, name=REQUEST, holder=self._holder, expires=expires)

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a request (this process's, or one another replica
        left in the store); True when there is one, gathered for DEBOUNCE_SECONDS.

        A request is forgotten only once it is taken from the store too: while the
        database is away this raises its error and the request stays wanted, so the next
        call, once the database answers, returns True (a poll then follows)."""
        deadline = time.monotonic() + seconds
        while not self._wanted.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wanted.wait(), timeout=min(CHECK_SECONDS, left))
            if not self._wanted.is_set() and await self._take_stored():
                self._wanted.set()  # taken from the store: kept here until carried out
        await asyncio.sleep(max(DEBOUNCE_SECONDS, self._again_at - time.monotonic()))
        await self._take_stored()  # the pushes of the debounce, and this process's own
        self._wanted.clear()
        self._unstored = False  # carried out here: no replica needs to learn of it
        self._owed = True
        return True

    def polling(self) -> bool:
        """A poll starts on the leader: True when it carries out a request :meth:`wait`
        returned (it then calls :meth:`poll_failed` if the database failed it)."""
        owed, self._owed = self._owed, False
        return owed

    def poll_failed(self) -> None:
        """The poll that carried out a request could not record what it read (the
        database away, or full): the request stands, and is polled for again after
        ``AGAIN_SECONDS``."""
        self._again_at = time.monotonic() + AGAIN_SECONDS
        self._wanted.set()

    async def _take_stored(self) -> bool:
        return await leases.take(self._engine, name=REQUEST)
