"""The JSON of ``AiohttpRequest``: request bodies and Telegram's answers, encoded and parsed
with orjson, mean what python-telegram-bot's own standard-library JSON means."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from telegram.error import TelegramError
from telegram.request import BaseRequest, RequestData
from telegram.request._requestparameter import RequestParameter

from bot.channels.telegram.request import AiohttpRequest, _json_payload

# JSON values as the Bot API sends and takes them: any text (Korean, emoji, controls),
# integers of Telegram's 64-bit ids, finite floats, nested objects and arrays.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _theirs(payload: bytes) -> Any:
    """What PTB's own parser returns, or the exception it raises."""
    try:
        return BaseRequest.parse_json_payload(payload)
    except (TelegramError, RecursionError) as exc:
        return type(exc), str(exc)


def _ours(payload: bytes) -> Any:
    try:
        return AiohttpRequest.parse_json_payload(payload)
    except (TelegramError, RecursionError) as exc:
        return type(exc), str(exc)


@given(st.dictionaries(st.text(), values, max_size=6), st.booleans())
def test_answers_parse_as_ptb_parses_them(answer: dict[str, Any], ascii_only: bool) -> None:
    payload = json.dumps(answer, ensure_ascii=ascii_only).encode()
    assert _ours(payload) == _theirs(payload) == answer


@given(st.binary(max_size=200))
def test_any_bytes_parse_or_fail_as_ptb_parses_them(payload: bytes) -> None:
    assert _ours(payload) == _theirs(payload)


@pytest.mark.parametrize(
    "payload",
    [
        b'{"ok": true, "result": {"text": "\xed\x95\x9c\xff"}}',  # not UTF-8: replaced
        b'{"ok": true, "big": 123456789012345678901234567890}',  # past 64 bits
        b'{"ok": NaN}',
        b'{"ok": true, "s": "\\ud800"}',  # a lone surrogate
        b"\xef\xbb\xbf{}",  # a byte order mark
        b"<html>Bad Gateway</html>",
        b"",
        b"[" * 5000 + b"]" * 5000,
    ],
)
def test_odd_answers_parse_or_fail_as_ptb_parses_them(payload: bytes) -> None:
    assert _ours(payload) == _theirs(payload)


@given(st.dictionaries(st.text(min_size=1), values, min_size=1, max_size=6))
def test_bodies_mean_what_ptbs_bodies_mean(parameters: dict[str, Any]) -> None:
    data = RequestData([RequestParameter(name, value, None) for name, value in parameters.items()])
    ours, theirs = json.loads(_json_payload(data)), json.loads(data.json_payload)
    assert ours.keys() == theirs.keys()
    for name, value in ours.items():
        # Text goes as it is; any other value as its JSON text, which Telegram decodes.
        if isinstance(parameters[name], str):
            assert value == theirs[name] == parameters[name]
        else:
            assert json.loads(value) == json.loads(theirs[name]) == parameters[name]
