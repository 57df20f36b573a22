"""Leases in the database: one leader among replicas, and a count of the live ones.

The leader runs what must happen once: polling the sources, planning digests, and
Telegram long polling. Every replica sends from the outbox. A lease is a row with an
expiry; its holder renews it every ``RENEW_SECONDS``; when the holder dies, another replica
takes it once it expires, within ``LEASE_SECONDS + RENEW_SECONDS`` (< 30 s).

Each replica also keeps a ``replica:<id>`` lease alive, so every replica knows how many
share the platforms' overall caps (each sends at ``cap / live replicas``), and a one-shot
command (``digest --now``, ``broadcast --yes``) knows to leave its messages to them. A
one-shot command that sends from its own process, with no replica running, keeps a
``oneshot:<id>`` lease meanwhile: a replica that starts waits until it is gone.
"""

from __future__ import annotations

import datetime as dt
import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery.claims import owner_is_alive_here, owner_is_dead
from bot.store import leases
from bot.util import utcnow

log = logging.getLogger("bot.leader")

LEADER = "leader"
REPLICA_PREFIX = "replica:"
ONE_SHOT_PREFIX = "oneshot:"
LEASE_SECONDS = 15.0
RENEW_SECONDS = 5.0
# A presence lease that lapsed longer ago than this is forgotten by services_present: a
# process that has not renewed it for so long is no service to wait on.
LAPSED_SECONDS = 3600.0


class Leases:
    def __init__(self, *, engine: AsyncEngine, holder: str) -> None:
        self._engine = engine
        self.holder = holder
        self.is_leader = False
        self.registered_at: dt.datetime | None = None  # when this replica's presence began
        self._leader_until: dt.datetime | None = None  # expiry of the leader lease held

    async def _hold(self, name: str, *, now: dt.datetime) -> bool:
        """Take or renew lease ``name``; True when this holder has it afterwards."""
        return await leases.hold(
            self._engine,
            name=name,
            holder=self.holder,
            now=now,
            expires=now + dt.timedelta(seconds=LEASE_SECONDS),
            is_gone=owner_is_dead,
        )

    async def tick(self, *, now: dt.datetime | None = None) -> bool:
        """Renew this replica's presence and try for leadership; returns ``is_leader``."""
        now = now or utcnow()
        if await self._hold(REPLICA_PREFIX + self.holder, now=now) and self.registered_at is None:
            self.registered_at = now
        was = self.is_leader
        self.is_leader = await self._hold(LEADER, now=now)
        if self.is_leader:
            self._leader_until = now + dt.timedelta(seconds=LEASE_SECONDS)
        if self.is_leader != was:
            log.info("this replica is %s", "now the leader" if self.is_leader else "a follower")
        return self.is_leader

    def step_down_if_expired(self, *, now: dt.datetime | None = None) -> None:
        """After a failed renewal: stop acting as leader once the lease held has expired,
        since another replica may hold it by now."""
        if self.is_leader and (
            self._leader_until is None or (now or utcnow()) >= self._leader_until
        ):
            self.is_leader = False
            log.warning("leader lease expired without renewal: acting as a follower")

    async def live_replicas(self, *, now: dt.datetime | None = None) -> int:
        count = await leases.count_live(self._engine, prefix=REPLICA_PREFIX, now=now or utcnow())
        return max(1, count)

    async def counted_by_all(self, *, now: dt.datetime | None = None) -> bool:
        """True once every other live replica has renewed its presence since this one
        registered, and so counts this one in its share of the caps (each counts the live
        replicas right after renewing). Until then this replica must not send: the others
        still send at shares that leave it out. Replicas of this host that are gone are
        left out (they send nothing)."""
        if self.registered_at is None:
            return False
        others = await leases.live_holders(
            self._engine, prefix=REPLICA_PREFIX, now=now or utcnow(), besides=self.holder
        )
        renewed_since = self.registered_at + dt.timedelta(seconds=LEASE_SECONDS)
        return all(expires > renewed_since or owner_is_dead(holder) for holder, expires in others)

    async def hold_one_shot(self) -> None:
        """Take or renew this one-shot command's lease: it is sending from its own process."""
        await self._hold(ONE_SHOT_PREFIX + self.holder, now=utcnow())

    async def release_one_shot(self) -> None:
        await leases.drop(self._engine, name=ONE_SHOT_PREFIX + self.holder)

    async def release(self) -> None:
        """A clean stop hands leadership over at once instead of after the expiry."""
        await leases.release(
            self._engine,
            holder=self.holder,
            names=[LEADER, REPLICA_PREFIX + self.holder],
            # Presence rows of replicas long gone would otherwise accumulate.
            prune_prefixes=[REPLICA_PREFIX, ONE_SHOT_PREFIX],
            expired_before=utcnow() - dt.timedelta(hours=1),
        )
        self.is_leader = False


async def live_services(engine: AsyncEngine, *, now: dt.datetime | None = None) -> int:
    """How many service processes (``trendbot run``, ``trendbot console``) keep a presence
    lease on this database; those of this host that are gone are left out.

    A one-shot command that sends (``digest --now``, ``broadcast --yes``) leaves its
    messages to them when there is one: they alone then pace the platforms' caps.
    """
    return await _live(engine, REPLICA_PREFIX, now=now)


async def services_present(engine: AsyncEngine, *, now: dt.datetime | None = None) -> int:
    """:func:`live_services`, and the service processes of this host whose presence lease
    lapsed while they are still running: they could not renew it (a full disk, a database
    that refuses their writes), and still hold what they claimed. A one-shot command waits
    on them rather than say they stopped and take over."""
    now = now or utcnow()
    since = now - dt.timedelta(seconds=LAPSED_SECONDS)
    holders = await leases.live_holders(engine, prefix=REPLICA_PREFIX, now=since)
    return sum(
        1
        for holder, expires in holders
        if not owner_is_dead(holder) and (expires >= now or owner_is_alive_here(holder))
    )


async def one_shots_sending(engine: AsyncEngine, *, now: dt.datetime | None = None) -> int:
    """How many one-shot commands send from their own process on this database (no
    service was running when they began); a service starting waits for them to stop."""
    return await _live(engine, ONE_SHOT_PREFIX, now=now)


async def _live(engine: AsyncEngine, prefix: str, *, now: dt.datetime | None) -> int:
    holders = await leases.live_holders(engine, prefix=prefix, now=now or utcnow())
    return sum(1 for holder, _ in holders if not owner_is_dead(holder))
