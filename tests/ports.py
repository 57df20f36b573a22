"""A TCP port for a ``trendbot run`` started by a test, chosen where no other test's server
lands.

A port found free and closed again is only free until someone binds it, and the child
process takes a second or two to start. Every fake server of the suite binds port 0, so
the kernel hands it a port of the ephemeral range (``ip_local_port_range``); a port handed
to ``trendbot`` is drawn below that range instead, at random, and checked bindable, so a
fake started by a parallel lane meanwhile cannot take it.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 20_000  # above the registered ports that local services commonly hold


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(part) for part in RANGE_FILE.read_text().split())
    except (OSError, ValueError):
        return 32_768, 60_999  # Linux's default
    return low, high


def free_port() -> int:
    """A port of 127.0.0.1, free now, outside the range the kernel picks ports 0 from."""
    low, high = ephemeral_range()
    candidates = range(LOWEST, low) if low - LOWEST >= 1_000 else range(high + 1, 65_536)
    for port in random.sample(candidates, k=min(200, len(candidates))):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port outside the ephemeral range")
