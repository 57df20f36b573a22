"""Delivery: the outbox worker and the platforms' pace.

``engine``: :class:`Delivery`, the outbox worker, which composes its parts: ``queues`` (the
claimed rows in memory, per chat, shared by the parts), ``claims`` (the claimer: fills the
queues from the outbox, sweeps the claims of workers that stopped), ``recording`` (the
records of sends, group-committed, and the database's health), ``retries`` (the failure
policy carried out: what a failed send calls for) and ``rendering`` (the messages of
claimed rows). Beside it: the platforms' pace (``pacing``), replies to commands through it
(``replies``), the failure rules (``failures``: an error x its attempts -> retry, give up,
or stop the chat) and the port each platform implements (``sender``).

``__all__`` is what the rest of the bot takes from the package; the platforms' request
code also reads ``pacing``'s send stamps from that module.
"""

from bot.delivery.claims import (
    ONE_SHOT_OUTAGE_SECONDS,
    REQUEUE_HOLD_SECONDS,
    SWEEP_EVERY_SECONDS,
    owner_is_alive_here,
    owner_is_dead,
)
from bot.delivery.engine import Delivery
from bot.delivery.pacing import Pacing
from bot.delivery.recording import DB_RETRY_FIRST_SECONDS, DB_RETRY_MAX_SECONDS
from bot.delivery.replies import Replies
from bot.delivery.sender import Attempt, BaseSender, Sender

__all__ = [
    "DB_RETRY_FIRST_SECONDS",
    "DB_RETRY_MAX_SECONDS",
    "ONE_SHOT_OUTAGE_SECONDS",
    "REQUEUE_HOLD_SECONDS",
    "SWEEP_EVERY_SECONDS",
    "Attempt",
    "BaseSender",
    "Delivery",
    "Pacing",
    "Replies",
    "Sender",
    "owner_is_alive_here",
    "owner_is_dead",
]
