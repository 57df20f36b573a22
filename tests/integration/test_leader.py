"""Leases: one leader among replicas, takeover on expiry or death, the live count."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import sys

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.ops.leader import LEASE_SECONDS, RENEW_SECONDS, Leases
from bot.util import utcnow


async def test_one_leader_and_takeover_after_expiry(engine: AsyncEngine) -> None:
    a = Leases(engine=engine, holder="host-a:1:x")
    b = Leases(engine=engine, holder="host-b:1:y")
    now = utcnow()
    assert await a.tick(now=now)
    assert not await b.tick(now=now)
    assert await a.tick(now=now + dt.timedelta(seconds=RENEW_SECONDS))  # renewal keeps it
    assert await b.live_replicas(now=now) == 2
    # A stops renewing (it died on another host): B takes over once the lease expires,
    # well within 30 s of A's last renewal.
    later = now + dt.timedelta(seconds=RENEW_SECONDS + LEASE_SECONDS + 1)
    assert LEASE_SECONDS + RENEW_SECONDS < 30
    assert await b.tick(now=later)
    assert not await a.tick(now=later)
    assert await b.live_replicas(now=later) == 2


async def test_clean_release_hands_over_at_once(engine: AsyncEngine) -> None:
    a = Leases(engine=engine, holder="host-a:1:x")
    b = Leases(engine=engine, holder="host-b:1:y")
    assert await a.tick()
    await a.release()
    assert await b.tick()
    assert await b.live_replicas() == 1


async def test_a_killed_local_holder_is_replaced_without_waiting(engine: AsyncEngine) -> None:
    gone = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import os; print(os.getpid())", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await gone.communicate()
    dead = Leases(engine=engine, holder=f"{socket.gethostname()}:{out.decode().strip()}:z")
    assert await dead.tick()
    alive = Leases(engine=engine, holder=f"{socket.gethostname()}:1:w")  # pid 1 exists
    assert await alive.tick()


async def test_a_new_replica_waits_until_every_other_counts_it(engine: AsyncEngine) -> None:
    a = Leases(engine=engine, holder="host-a:1:x")
    b = Leases(engine=engine, holder="host-b:1:y")
    c = Leases(engine=engine, holder="host-c:1:z")
    now = utcnow()
    assert not await c.counted_by_all(now=now)  # not registered yet
    await a.tick(now=now)
    await b.tick(now=now)
    joined = now + dt.timedelta(seconds=1)
    await c.tick(now=joined)
    assert not await c.counted_by_all(now=joined)  # A and B still send at halves
    await a.tick(now=joined + dt.timedelta(seconds=2))
    assert not await c.counted_by_all(now=joined + dt.timedelta(seconds=2))  # B not yet
    await b.tick(now=joined + dt.timedelta(seconds=4))
    assert await c.counted_by_all(now=joined + dt.timedelta(seconds=4))
    assert await c.live_replicas(now=joined + dt.timedelta(seconds=4)) == 3


async def test_a_lone_replica_is_counted_at_once(engine: AsyncEngine) -> None:
    alone = Leases(engine=engine, holder="host-a:1:x")
    gone = Leases(engine=engine, holder="host-b:1:y")
    now = utcnow()
    await gone.tick(now=now - dt.timedelta(seconds=LEASE_SECONDS + 1))  # expired since
    await alone.tick(now=now)
    assert await alone.counted_by_all(now=now)


async def test_a_leader_that_cannot_renew_steps_down_when_its_lease_expires(
    engine: AsyncEngine,
) -> None:
    a = Leases(engine=engine, holder="host-a:1:x")
    b = Leases(engine=engine, holder="host-b:1:y")
    now = utcnow()
    assert await a.tick(now=now)
    # A's renewals fail (its database connection is away): within the lease it leads on...
    a.step_down_if_expired(now=now + dt.timedelta(seconds=LEASE_SECONDS - 1))
    assert a.is_leader
    # ...and once the lease has expired it no longer acts as leader, as B may take it.
    expired = now + dt.timedelta(seconds=LEASE_SECONDS + 1)
    a.step_down_if_expired(now=expired)
    assert not a.is_leader
    assert await b.tick(now=expired)
