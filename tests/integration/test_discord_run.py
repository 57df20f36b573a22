"""A real ``trendbot run`` with Discord: its commands registered at start, interactions on
``POST /discord/interactions``, a digest delivered to a channel of FakeDiscord, the chat in
``trendbot subscribers``, ``/healthz`` and the metrics; no secret in any output."""

from __future__ import annotations

import signal
from pathlib import Path

import aiohttp
import httpx
import pytest

from tests.cli import run_cli_async, start_cli
from tests.fakes.discord_api import MANAGE_CHANNELS, FakeDiscord, command_interaction
from tests.integration.test_ops import wait_healthy
from tests.integration.test_poll import page, write
from tests.ports import free_port
from tests.run_env import discord_env

CHANNEL = "1300000000000000001"
ROUTE = "POST /channels/{channel_id}/messages"


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_run_answers_interactions_and_delivers_a_digest(
    tmp_path: Path, clean_env: dict[str, str], database_url: str
) -> None:
    wiki = tmp_path / "wiki"
    write(wiki, *page("papers/2026/2608.00001-evolution", tags="[rl, reasoning]"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with FakeDiscord() as dc, httpx.AsyncClient() as client, aiohttp.ClientSession() as http:
        dc.add_channel(CHANNEL)
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=str(wiki),
            **discord_env(dc),
            HTTP_PORT=str(port),
            LOG_LEVEL="DEBUG",
        )
        out_path, err_path = tmp_path / "out.log", tmp_path / "err.log"
        process = start_cli(env=env, cwd=tmp_path, out=out_path, err=err_path)
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            health = (await client.get(f"{base}/healthz")).json()
            assert health["channels"].get("discord") is True
            assert {c["name"] for c in dc.commands} >= {"subscribe", "digest", "help"}

            url = f"{base}/discord/interactions"
            body, _ = command_interaction(
                dc, "subscribe", "rl", channel_id=CHANNEL, permissions=MANAGE_CHANNELS
            )
            status, answer = await dc.interact(http, url, body)
            assert status == 200 and answer["type"] == 4

            body, _ = command_interaction(
                dc, "digest", channel_id=CHANNEL, permissions=MANAGE_CHANNELS
            )
            status, answer = await dc.interact(http, url, body)
            assert status == 200
            (delivered,) = await dc.wait_for(1, timeout=30)
            assert delivered.body["flags"] & (1 << 15)
            assert "evolution" in str(delivered.body["components"]).lower()

            listed = await run_cli_async("subscribers", env=env, cwd=tmp_path)
            assert f"discord:{CHANNEL} state=active" in listed.stdout
            sent = await run_cli_async(
                "broadcast", "--text", "Hello *all* @everyone", "--platform", "discord", "--yes",
                env=env, cwd=tmp_path,
            )  # fmt: skip
            assert sent.returncode == 0, sent.stderr
            (broadcast,) = await dc.wait_for(
                lambda c: c.route == ROUTE and c.ok and "Hello" in c.body.get("content", ""),
                timeout=30,
            )
            assert broadcast.body["content"] == "Hello \\*all\\* \\@everyone"
            assert broadcast.body["allowed_mentions"] == {"parse": []}
            exported = await run_cli_async(
                "export", "--chat", f"discord:{CHANNEL}", env=env, cwd=tmp_path
            )
            assert exported.returncode == 0
            assert (
                f'"chat": "discord:{CHANNEL}"' in exported.stdout and "filter=rl" in exported.stdout
            )
            metrics = (await client.get(f"{base}/metrics")).text
            assert 'trendbot_messages_sent_total{kind="digest",platform="discord"}' in metrics
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    out, err = out_path.read_text(), err_path.read_text()
    assert process.returncode == 0, err[-3000:]
    assert dc.token not in out + err
    for token in dc.interactions:  # each interaction's token, good for 15 minutes
        assert token not in out + err
