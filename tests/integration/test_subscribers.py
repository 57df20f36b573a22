"""``trendbot subscribers``: why a chat that is not active is stopped (``reason=``), in its
lines and in ``--json``, on each store, as the operating page and the contract say."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.models import ChatKind, ChatSettings, ChatState, Platform
from bot.rules.filters import parse_filter
from bot.store import chats as chat_store
from tests.cli import run_cli_async

ROOT = Path(__file__).resolve().parents[2]

# fmt: off
# chat id -> (state, the code and reason the store keeps, the reason= it is listed with)
STOPPED = {
    "1001": (ChatState.ACTIVE, None, None, None),
    "1002": (ChatState.INACTIVE, "blocked", "blocked: Forbidden: bot was blocked", "blocked"),
    "1003": (ChatState.INACTIVE, "blocked", "blocked: Forbidden: bot was kicked", "removed"),
    "1004": (ChatState.INACTIVE, "removed", "removed from chat", "removed"),
    "1005": (ChatState.INACTIVE, "gone", "gone: Bad Request: chat not found", "unknown_chat"),
    "C1": (ChatState.INACTIVE, "is_archived", "is_archived", "archived"),
    "C2": (ChatState.INACTIVE, "channel_not_found", "channel_not_found", "unknown_channel"),
    "C3": (ChatState.INACTIVE, "app_uninstalled", "app_uninstalled", "app_uninstalled"),
    "C4": (ChatState.INACTIVE, "awaiting_invite", "awaiting_invite", "awaiting_invite"),
    "C5": (ChatState.PAUSED, "not_in_channel", "not_in_channel", "removed"),
    "C6": (ChatState.PAUSED, None, None, "paused_in_chat"),
}
# fmt: on


async def _chats(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        for chat_id, (state, code, reason, _) in STOPPED.items():
            platform = Platform.SLACK if chat_id.startswith("C") else Platform.TELEGRAM
            record = await chat_store.ensure(
                conn,
                defaults=ChatSettings(
                    platform=platform,
                    chat_id=chat_id,
                    kind=ChatKind.GROUP,
                    filter=parse_filter("rl"),
                ),
            )
            if code is not None and reason is not None:
                await chat_store.deactivate(
                    conn, pk=record.pk, reason=reason, code=code, state=state
                )
            elif state != ChatState.ACTIVE:  # paused with the pause command
                await chat_store.save(conn, before=record, after=replace(record.chat, state=state))


async def test_subscribers_say_why_a_chat_is_stopped(
    engine: AsyncEngine, database_url: str, clean_env: dict[str, str], tmp_path: Path
) -> None:
    await _chats(engine)
    env = {**clean_env, "DATABASE_URL": database_url}
    lines = (await run_cli_async("subscribers", env=env, cwd=tmp_path)).stdout.splitlines()
    objects = [
        json.loads(line)
        for line in (
            await run_cli_async("subscribers", "--json", env=env, cwd=tmp_path)
        ).stdout.splitlines()
    ]
    assert len(lines) == len(objects) == len(STOPPED)
    for line, fields in zip(lines, objects, strict=True):
        chat_id = fields["chat"].split(":", 1)[1]
        state, _, _, reason = STOPPED[chat_id]
        assert fields["state"] == state.value
        assert fields.get("reason") == reason
        if reason is None:
            assert " reason=" not in line
        else:
            assert line.startswith(f"{fields['chat']} state={state.value} reason={reason} ")
        # The line and the JSON object carry the same keys.
        keys = [part.split("=", 1)[0] for part in line.split(' filter="')[0].split()[1:]]
        assert [*keys, "filter"] == [k for k in fields if k != "chat"]


@pytest.mark.parametrize("page", ["docs/operating.md"])
def test_documented_reasons_are_ones_the_listing_gives(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    given = {
        *chat_store.STOP_REASONS.values(),
        chat_store.PAUSED_IN_CHAT,
        chat_store.UNKNOWN_REASON,
    }
    documented = set(re.findall(r"reason=([a-z_]+)", text))
    assert documented and documented <= given
