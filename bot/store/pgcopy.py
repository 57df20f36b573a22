"""PostgreSQL's binary ``COPY`` format, for rows whose fields are mostly encoded once and
repeated: the planner's ledger rows are a chat's key followed by the same few pages' fields
for thousands of chats.

asyncpg's ``copy_records_to_table`` encodes every field of every record, which was a
third of the planner's CPU at a million chats (13 million ledger rows). Here a row is
bytes joined from fields encoded beforehand, and the server reads the same ``COPY`` it
read before. The format: https://www.postgresql.org/docs/current/sql-copy.html (File
Formats, Binary Format); each field as its type's binary send function writes it.
"""

from __future__ import annotations

import datetime as dt
import struct

# The signature, then the flags (no OIDs) and the length of the header extension (none).
HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)  # a field count of -1 ends the data

_INT4 = struct.Struct(">ii")  # length 4, then the value
_INT8 = struct.Struct(">iq")  # length 8, then the value
_EPOCH = dt.datetime(2000, 1, 1)  # timestamps count microseconds from here


def row_start(fields: int) -> bytes:
    """What begins a row of ``fields`` fields."""
    return struct.pack(">h", fields)


def int4(value: int) -> bytes:
    """An ``integer`` field."""
    return _INT4.pack(4, value)


def text(value: str) -> bytes:
    """A ``text`` or ``varchar`` field: its UTF-8 bytes."""
    data = value.encode()
    return struct.pack(">i", len(data)) + data


def timestamp(value: dt.datetime) -> bytes:
    """A ``timestamp without time zone`` field, of a naive datetime."""
    if value.tzinfo is not None:
        raise ValueError("a timestamp without time zone takes a naive datetime")
    delta = value - _EPOCH
    return _INT8.pack(8, (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)
