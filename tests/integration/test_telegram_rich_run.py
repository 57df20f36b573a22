"""Rich digests from the command line, as a deployment gets them by default
(``TELEGRAM_RICH_MESSAGES`` unset, that is ``auto``): ``trendbot digest --now`` sends each
chat its digest as one rich message, and against a Bot API server without rich messages
(404, https://core.telegram.org/bots/api#making-requests) the same command falls back to the
HTML digest, every chat still getting its digest once."""

from __future__ import annotations

import collections
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.fakes.telegram_api import FakeTelegram, check_rich_message
from tests.integration.test_beside_run import cli, due_later
from tests.integration.test_crash import run_env
from tests.integration.test_planner import started

TOKEN = "123456789:AAHfakeTokenForTests_0123456789abcdef"
CHATS = 12


async def _world(engine: AsyncEngine, wiki: Path) -> list[int]:
    world = await started(engine, wiki)
    ids = await due_later(engine, CHATS)
    await world.publish("papers/2026/rich-from-the-shell", tags="[rl]")
    return ids


def _auto(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "TELEGRAM_RICH_MESSAGES"}


async def test_digest_now_sends_rich_messages_by_default(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    wiki = tmp_path / "wiki"
    ids = await _world(engine, wiki)
    async with FakeTelegram(token=TOKEN) as tg:
        env = _auto(run_env(clean_env, database_url, wiki, tg))
        done = await cli(env, tmp_path, "digest", "--now")
        assert done.returncode == 0, done.stderr
        rich = tg.calls("sendRichMessage", ok=True)
        assert tg.calls("sendMessage", ok=True) == []
    assert sorted(collections.Counter(c.chat_id for c in rich)) == ids
    assert set(collections.Counter(c.chat_id for c in rich).values()) == {1}
    for call in rich:
        check_rich_message(call.params["rich_message"])
    assert "rich-from-the-shell" in str(rich[0].params["rich_message"]).lower().replace(" ", "-")
    assert (
        done.stdout[-1]
        == f"{CHATS} planned, 0 retried, {CHATS} sent, 0 failed, 0 left queued for retry"
    )


async def test_an_older_bot_api_server_gets_the_html_digest(
    engine: AsyncEngine, database_url: str, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    wiki = tmp_path / "wiki"
    ids = await _world(engine, wiki)
    async with FakeTelegram(token=TOKEN) as tg:
        tg.bot_api_version = (9, 4)  # before sendRichMessage: 404 Not Found
        env = _auto(run_env(clean_env, database_url, wiki, tg))
        done = await cli(env, tmp_path, "digest", "--now")
        assert done.returncode == 0, done.stderr
        html = tg.calls("sendMessage", ok=True)
        refused = tg.calls("sendRichMessage", ok=False)
    assert sorted(collections.Counter(c.chat_id for c in html)) == ids
    assert set(collections.Counter(c.chat_id for c in html).values()) == {1}
    assert all("<blockquote expandable>" in c.params["text"] for c in html)
    # Once the server said it has no such method, the other chats were not tried.
    assert 1 <= len(refused) < CHATS
    assert (
        done.stdout[-1]
        == f"{CHATS} planned, 0 retried, {CHATS} sent, 0 failed, 0 left queued for retry"
    )
