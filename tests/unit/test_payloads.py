"""Outbox payloads (bot/payloads.py): typed, versioned, and old rows still read."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import payloads
from bot.payloads import Alert, Broadcast, Digest, Instant, Notice, PayloadError, decode, encode

entries = st.lists(st.tuples(st.integers(1, 2**40), st.booleans()), max_size=20).map(tuple)
texts = st.text(max_size=200)
typed = st.one_of(
    st.builds(
        Digest,
        pages=entries,
        date=st.none() | st.dates(),
        ranked=st.booleans(),
        rest=st.lists(st.integers(1, 2**40), max_size=5).map(tuple),
        welcome=st.booleans(),
    ),
    st.builds(Instant, pages=entries),
    st.builds(Broadcast, text=texts),
    st.builds(Alert, text=texts),
    st.builds(Notice, text=texts),
)


@given(typed)
def test_decode_of_encode_is_identity(payload: payloads.Payload) -> None:
    stored = encode(payload)
    assert json.loads(stored)["v"] == payloads.VERSION
    assert decode(payload.kind, stored) == payload


@pytest.mark.parametrize(
    ("kind", "stored", "expected"),
    [
        # rows written before payloads had a version
        (
            "digest",
            '{"pages":[[3,false],[5,true]],"date":"2026-12-01","ranked":true,"rest":[7]}',
            Digest(
                pages=((3, False), (5, True)), date=dt.date(2026, 12, 1), ranked=True, rest=(7,)
            ),
        ),
        ("digest", '{"pages":[[3,false]]}', Digest(pages=((3, False),))),
        (
            "digest",
            '{"pages":[],"date":"2026-12-01","ranked":true,"welcome":true}',
            Digest(pages=(), date=dt.date(2026, 12, 1), ranked=True, welcome=True),
        ),
        ("page", '{"pages":[[9,true]]}', Instant(pages=((9, True),))),
        ("broadcast", '{"text":"Hello"}', Broadcast(text="Hello")),
        ("alert", '{"text":"Source down"}', Alert(text="Source down")),
        ("notice", '{"text":"3 chats"}', Notice(text="3 chats")),
    ],
)
def test_old_payloads_read(kind: str, stored: str, expected: payloads.Payload) -> None:
    assert decode(kind, stored) == expected
    assert decode(kind, json.loads(stored)) == expected


@pytest.mark.parametrize(
    ("kind", "stored"),
    [
        ("digest", "[1, 2]"),
        ("digest", '{"v": 2, "pages": []}'),
        ("digest", '{"pages": [[1]]}'),
        ("digest", '{"pages": [[1, false]], "date": "yesterday"}'),
        ("page", '{"pages": 5}'),
        ("broadcast", "{}"),
        ("frobnicate", '{"text": "x"}'),
    ],
)
def test_malformed_payloads_are_a_payload_error(kind: str, stored: str) -> None:
    with pytest.raises(PayloadError):
        decode(kind, stored)


def test_the_planners_digest_text_is_the_encoding_of_its_digest() -> None:
    digest = Digest(
        pages=((1, False), (2, True)), date=dt.date(2026, 1, 2), ranked=True, rest=(3, 4)
    )
    fast = payloads.encode_digest(
        digest.pages, rest=digest.rest, day=digest.date, ranked=True, welcome=False
    )
    assert fast == encode(digest)
    assert json.loads(fast) == {
        "v": 1,
        "pages": [[1, False], [2, True]],
        "date": "2026-01-02",
        "ranked": True,
        "rest": [3, 4],
    }
