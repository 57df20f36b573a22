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
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import time
from collections import OrderedDict

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.schema import leases
from bot.util import utcnow

SIGNATURE_HEADER = "X-Hub-Signature-256"
SIGNATURE_PREFIX = "sha256="
REPLAY_SECONDS = 300.0  # a signed body is acted on once within this window
MAX_REMEMBERED = 10_000  # signatures remembered at most (oldest forgotten first)
DEBOUNCE_SECONDS = 1.0  # pushes within this of the first make one poll
CHECK_SECONDS = 1.0  # how often the leader looks for a request another replica left
REQUEST = "refresh:requested"  # the leases row that carries a request between replicas
REQUEST_TTL_SECONDS = 60.0
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
        self.accepted = 0  # signed hooks acted on, in this process

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

    async def request(self) -> None:
        """A poll is wanted: signal this process, and leave the request for the leader."""
        self.accepted += 1
        self._wanted.set()
        # Kept a minute: long enough for the leader to see it, short enough that a request
        # whose leader died with it does not outlive the next scheduled poll by much.
        row = {
            "name": REQUEST,
            "holder": self._holder,
            "expires_at": utcnow() + dt.timedelta(seconds=REQUEST_TTL_SECONDS),
        }
        async with self._engine.begin() as conn:
            insert = (postgresql if conn.dialect.name == "postgresql" else sqlite).insert
            statement = insert(leases).values(row)
            await conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[leases.c.name], set_={"expires_at": row["expires_at"]}
                )
            )

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a request (this process's, or one another replica
        left in the store); True when there is one, gathered for DEBOUNCE_SECONDS."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._wanted.wait(), timeout=min(CHECK_SECONDS, left))
            except TimeoutError:
                if not await self._take_stored():
                    continue
            await asyncio.sleep(DEBOUNCE_SECONDS)
            self._wanted.clear()
            await self._take_stored()
            return True

    async def _take_stored(self) -> bool:
        async with self._engine.begin() as conn:
            found = await conn.scalar(select(leases.c.expires_at).where(leases.c.name == REQUEST))
            if found is None:
                return False
            await conn.execute(delete(leases).where(leases.c.name == REQUEST))
        return True
