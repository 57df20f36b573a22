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

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.delivery import owner_is_dead
from bot.store.engine import reader
from bot.store.pages import utcnow
from bot.store.schema import leases

log = logging.getLogger("bot.leader")

LEADER = "leader"
REPLICA_PREFIX = "replica:"
ONE_SHOT_PREFIX = "oneshot:"
LEASE_SECONDS = 15.0
RENEW_SECONDS = 5.0


class Leases:
    def __init__(self, *, engine: AsyncEngine, holder: str) -> None:
        self._engine = engine
        self.holder = holder
        self.is_leader = False
        self.registered_at: dt.datetime | None = None  # when this replica's presence began
        self._leader_until: dt.datetime | None = None  # expiry of the leader lease held

    async def _hold(self, name: str, *, now: dt.datetime) -> bool:
        """Take or renew lease ``name``; True when this holder has it afterwards."""
        expires = now + dt.timedelta(seconds=LEASE_SECONDS)
        async with self._engine.begin() as conn:
            result = await conn.execute(
                update(leases)
                .where(
                    leases.c.name == name,
                    (leases.c.holder == self.holder) | (leases.c.expires_at < now),
                )
                .values(holder=self.holder, expires_at=expires)
            )
            if result.rowcount == 1:
                return True
            current = (
                await conn.execute(select(leases.c.holder).where(leases.c.name == name))
            ).first()
            if current is not None:
                if not owner_is_dead(current[0]):
                    return False
                # The holder was a process of this host that no longer exists (killed):
                # no need to wait for its lease to expire.
                result = await conn.execute(
                    update(leases)
                    .where(leases.c.name == name, leases.c.holder == current[0])
                    .values(holder=self.holder, expires_at=expires)
                )
                return result.rowcount == 1
        try:
            async with self._engine.begin() as conn:
                await conn.execute(
                    insert(leases).values(name=name, holder=self.holder, expires_at=expires)
                )
            return True
        except IntegrityError:  # another replica inserted it first
            return False

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
        now = now or utcnow()
        async with reader(self._engine).connect() as conn:
            count = (
                await conn.execute(
                    select(func.count()).where(
                        leases.c.name.like(REPLICA_PREFIX + "%"), leases.c.expires_at >= now
                    )
                )
            ).scalar_one()
        return max(1, int(count))

    async def counted_by_all(self, *, now: dt.datetime | None = None) -> bool:
        """True once every other live replica has renewed its presence since this one
        registered, and so counts this one in its share of the caps (each counts the live
        replicas right after renewing). Until then this replica must not send: the others
        still send at shares that leave it out. Replicas of this host that are gone are
        left out (they send nothing)."""
        if self.registered_at is None:
            return False
        now = now or utcnow()
        async with reader(self._engine).connect() as conn:
            rows = await conn.execute(
                select(leases.c.holder, leases.c.expires_at).where(
                    leases.c.name.like(REPLICA_PREFIX + "%"),
                    leases.c.holder != self.holder,
                    leases.c.expires_at >= now,
                )
            )
            others = rows.all()
        renewed_since = self.registered_at + dt.timedelta(seconds=LEASE_SECONDS)
        return all(expires > renewed_since or owner_is_dead(holder) for holder, expires in others)

    async def hold_one_shot(self) -> None:
        """Take or renew this one-shot command's lease: it is sending from its own process."""
        await self._hold(ONE_SHOT_PREFIX + self.holder, now=utcnow())

    async def release_one_shot(self) -> None:
        async with self._engine.begin() as conn:
            await conn.execute(delete(leases).where(leases.c.name == ONE_SHOT_PREFIX + self.holder))

    async def release(self) -> None:
        """A clean stop hands leadership over at once instead of after the expiry."""
        async with self._engine.begin() as conn:
            await conn.execute(
                delete(leases).where(
                    leases.c.holder == self.holder,
                    leases.c.name.in_([LEADER, REPLICA_PREFIX + self.holder]),
                )
            )
            # Presence rows of replicas long gone would otherwise accumulate.
            await conn.execute(
                delete(leases).where(
                    leases.c.name.like(REPLICA_PREFIX + "%")
                    | leases.c.name.like(ONE_SHOT_PREFIX + "%"),
                    leases.c.expires_at < utcnow() - dt.timedelta(hours=1),
                )
            )
        self.is_leader = False


async def live_services(engine: AsyncEngine, *, now: dt.datetime | None = None) -> int:
    """How many service processes (``trendbot run``, ``trendbot console``) keep a presence
    lease on this database; those of this host that are gone are left out.

    A one-shot command that sends (``digest --now``, ``broadcast --yes``) leaves its
    messages to them when there is one: they alone then pace the platforms' caps.
    """
    return await _live(engine, REPLICA_PREFIX, now=now)


async def one_shots_sending(engine: AsyncEngine, *, now: dt.datetime | None = None) -> int:
    """How many one-shot commands send from their own process on this database (no
    service was running when they began); a service starting waits for them to stop."""
    return await _live(engine, ONE_SHOT_PREFIX, now=now)


async def _live(engine: AsyncEngine, prefix: str, *, now: dt.datetime | None) -> int:
    now = now or utcnow()
    async with reader(engine).connect() as conn:
        holders = await conn.execute(
            select(leases.c.holder).where(
                leases.c.name.like(prefix + "%"), leases.c.expires_at >= now
            )
        )
        return sum(1 for (holder,) in holders if not owner_is_dead(holder))
