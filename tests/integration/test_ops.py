"""Operating a real ``trendbot run``: /healthz and /metrics over HTTP, Telegram webhooks and
Slack events on the same server, JSON logs with stable keys, SIGTERM, and no secret in any
output at DEBUG level."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.logs import JSON_KEYS
from bot.ops import web
from bot.ops.leader import LEADER
from bot.store.schema import audit_log, leases
from tests.cli import run_cli, start_cli, stderr_tail
from tests.fakes.feed_server import FeedServer, Served
from tests.fakes.slack_api import FakeSlack, signed_headers, slash_command_body
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_poll import page, write
from tests.ports import free_port
from tests.run_env import slack_env, telegram_env
from tests.waiting import wait_until

TELEGRAM_TOKEN = "123456789:AAHsecretTokenValueForLeakTest_0123456789"
WEBHOOK_SECRET = "webhookSecretForLeakTest_42"
SLACK_TOKEN = "xoxb-1-test-token"
SIGNING_SECRET = "signingSecretForLeakTest0123456789"
SECRETS = (TELEGRAM_TOKEN, WEBHOOK_SECRET, SLACK_TOKEN, SIGNING_SECRET)
SHUTDOWN_TOTAL_SECONDS = 15.0  # README: a stop takes at most 15 s in all
JSON_FEED_BODY = json.dumps(
    {
        "version": "https://jsonfeed.org/version/1.1",
        "items": [{"id": "urn:entry:1", "title": "One", "tags": ["rl"]}],
    }
).encode()


async def wait_healthy(
    client: httpx.AsyncClient, url: str, process: subprocess.Popen[bytes]
) -> None:

    async def healthy() -> bool:
        assert process.poll() is None, f"trendbot run exited early:\n{stderr_tail(process)}"
        try:
            return (await client.get(url)).status_code == 200
        except httpx.TransportError:
            return False

    await wait_until(healthy, seconds=60, what="/healthz to answer 200")


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_full_run_serves_http_and_leaks_no_secret(
    tmp_path: Path, clean_env: dict[str, str], database_url: str
) -> None:
    wiki = tmp_path / "wiki"
    write(wiki, *page("papers/2026/ops", tags="[rl]"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with (
        FakeTelegram(token=TELEGRAM_TOKEN, long_poll_cap=0.2) as tg,
        FakeSlack(token=SLACK_TOKEN) as sl,
        httpx.AsyncClient(timeout=10) as client,
    ):
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=f"{wiki},http://127.0.0.1:1/unreachable.xml",
            **telegram_env(tg, webhook_secret=WEBHOOK_SECRET),
            **slack_env(sl, signing_secret=SIGNING_SECRET),
            HTTP_PORT=str(port),
            LOG_LEVEL="DEBUG",
            LOG_FORMAT="json",
            PTB_TIMEDELTA="true",
        )
        out_path, err_path = tmp_path / "out.log", tmp_path / "err.log"
        process = start_cli(env=env, cwd=tmp_path, out=out_path, err=err_path)
        try:
            await wait_healthy(client, f"{base}/healthz", process)

            # Healthy from the start; each source shows once its first poll begins, and has
            # a last_poll_at (and an error, if any) once that poll is recorded.
            async def both_polled() -> dict[str, Any] | None:
                health: dict[str, Any] = (await client.get(f"{base}/healthz")).json()
                polled = [s for s in health["sources"] if s["last_poll_at"]]
                return health if len(polled) == 2 else None

            health = await wait_until(both_polled, what="both sources' first polls recorded")
            assert health["status"] == "ok" and health["database"] == "ok"
            assert health["channels"] == {"telegram": True, "slack": True}
            sources = {s["name"]: s for s in health["sources"]}
            assert sources[str(wiki)]["error"] is None
            assert sources["http://127.0.0.1:1/unreachable.xml"]["error"]
            assert tg.webhook is not None  # webhook mode registered with its secret

            update = tg.message(1001, "/subscribe rl")
            body = json.dumps(update).encode()
            wrong = await client.post(
                f"{base}/telegram/webhook",
                content=body,
                headers={"X-Telegram-Bot-Api-Secret-Token": "wrong"},
            )
            assert wrong.status_code == 401
            ok = await client.post(
                f"{base}/telegram/webhook",
                content=body,
                headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET},
            )
            assert ok.status_code == 200
            (reply,) = await tg.wait_for(1)
            assert "any of rl" in reply.params["text"]

            slash = slash_command_body(
                text="settings",
                user_id="U1",
                channel_id="C1",
                response_url=sl.response_url("r1"),
            )
            unsigned = await client.post(f"{base}/slack/events", content=slash)
            assert unsigned.status_code == 401
            signed = await client.post(
                f"{base}/slack/events", content=slash, headers=signed_headers(SIGNING_SECRET, slash)
            )
            assert signed.status_code == 200

            metrics = (await client.get(f"{base}/metrics")).text
            for name in (
                "trendbot_queue_depth",
                "trendbot_poll_duration_seconds",
                "trendbot_poll_errors_total",
                "trendbot_messages_sent_total",
            ):
                assert name in metrics
            # The leader, the replicas it counted and each source's last success are set
            # once the first lease renewal and the first poll are done.
            wanted = (
                "trendbot_leader 1.0",
                "trendbot_replicas_live 1.0",
                "trendbot_source_last_success_timestamp_seconds{source=",
            )

            async def all_set() -> str | None:
                metrics = (await client.get(f"{base}/metrics")).text
                return metrics if all(part in metrics for part in wanted) else None

            metrics = await wait_until(all_set, what=f"the metrics {wanted}")
            for part in wanted:
                assert part in metrics, part
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    out, err = out_path.read_text(), err_path.read_text()
    assert process.returncode == 0, err[-3000:]
    everything = out + err
    for secret in SECRETS:
        assert secret not in everything, "a secret reached the output"
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) > 10
    for line in lines:
        record = json.loads(line)  # one JSON object a line
        assert tuple(record)[: len(JSON_KEYS)] == JSON_KEYS


async def test_healthz_is_503_when_the_database_is_away() -> None:
    engine = create_async_engine("postgresql+asyncpg://postgres@127.0.0.1:1/nowhere")
    app = web.make_app(engine=engine, hooks=web.WebHooks())
    runner, port = await web.start(app, host="127.0.0.1", port=0)
    try:
        async with httpx.AsyncClient() as client:
            answer = await client.get(f"http://127.0.0.1:{port}/healthz")
            assert answer.status_code == 503
            assert answer.json()["database"] == "unreachable"
            assert (await client.get(f"http://127.0.0.1:{port}/metrics")).status_code == 200
            assert (await client.post(f"http://127.0.0.1:{port}/slack/events")).status_code == 404
    finally:
        await runner.cleanup()
        await engine.dispose()


async def test_healthz_and_metrics_answer_while_a_writer_holds_the_database(
    engine: AsyncEngine,
) -> None:
    """A long write (planning a large fan-out) must not make the probes time out: on SQLite
    they read beside the writer instead of queueing for its lock."""
    app = web.make_app(engine=engine, hooks=web.WebHooks())
    runner, port = await web.start(app, host="127.0.0.1", port=0)
    try:
        async with engine.begin() as writer, httpx.AsyncClient() as client:
            await writer.execute(delete(audit_log))  # the write lock is taken now
            async with asyncio.timeout(2.0):  # SQLite's busy timeout is 30 s
                health = await client.get(f"http://127.0.0.1:{port}/healthz")
                scraped = await client.get(f"http://127.0.0.1:{port}/metrics")
        assert health.status_code == 200 and health.json()["database"] == "ok"
        assert scraped.status_code == 200 and "trendbot_queue_depth" in scraped.text
    finally:
        await runner.cleanup()


# --- feeds with credentials, hanging feeds ---------------------------------------------------

FEED_PASSWORD = "feedPassw0rdForLeakTest"
FEED_API_KEY = "feedApiKeyForLeakTest123"
FEED_TOKEN = "feedTokenForLeakTest456"
FEED_SECRETS = (FEED_PASSWORD, FEED_API_KEY, FEED_TOKEN)


def start_run(env: dict[str, str], tmp_path: Path, *args: str) -> subprocess.Popen[bytes]:
    """``trendbot args`` (``run`` without any), its output added to out.log and err.log."""
    out, err = tmp_path / "out.log", tmp_path / "err.log"
    return start_cli(*args, env=env, cwd=tmp_path, out=out, err=err, append=True)


def with_credentials(url: str, path: str) -> str:
    return url.replace("http://", f"http://reader:{FEED_PASSWORD}@") + (
        f"{path}?api_key={FEED_API_KEY}&token={FEED_TOKEN}&page=1"
    )


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_feed_credentials_never_leave_the_feed_request(
    tmp_path: Path, clean_env: dict[str, str], database_url: str
) -> None:
    """Credentials in feed URLs appear in no log line (DEBUG, text and JSON), no /healthz
    field and no metric label of a real run, nor in the output of ``poll``."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with FeedServer() as feeds, httpx.AsyncClient(timeout=10) as client:
        feeds.serve("/ok.json", Served(body=JSON_FEED_BODY, content_type="application/feed+json"))
        ok = with_credentials(feeds.base_url, "/ok.json")
        missing = with_credentials(feeds.base_url, "/missing.json")  # 404: an error path
        unreachable = with_credentials("http://127.0.0.1:1", "/nothing")
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=f"{ok},{missing},{unreachable}",
            HTTP_PORT=str(port),
            LOG_LEVEL="DEBUG",
        )
        poll = await asyncio.to_thread(
            run_cli, "poll", env=dict(env, LOG_FORMAT="json"), cwd=tmp_path
        )
        assert poll.returncode == 0, poll.stderr
        process = start_run(env, tmp_path)
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            polled = f'poll_duration_seconds_count{{source="{feeds.base_url}/ok.json"}}'

            # Until the run's own first poll is recorded, in both places: the poller counts
            # each source's failures as that source ends, and the service records every
            # source's metrics once the whole poll has ended.
            async def recorded() -> tuple[httpx.Response, str] | None:
                health = await client.get(f"{base}/healthz")
                metrics_text = (await client.get(f"{base}/metrics")).text
                failed = [s for s in health.json()["sources"] if s["failed_polls"]]
                return (
                    (health, metrics_text) if len(failed) == 2 and polled in metrics_text else None
                )

            health, metrics_text = await wait_until(
                recorded, what="the first poll recorded in /healthz and /metrics"
            )
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)
    everything = "\n".join(
        [
            poll.stdout,
            poll.stderr,
            (tmp_path / "out.log").read_text(),
            (tmp_path / "err.log").read_text(),
            health.text,
            metrics_text,
        ]
    )
    assert process.returncode == 0
    for secret in FEED_SECRETS:
        assert secret not in everything, f"{secret} reached the output"
    assert base64.b64encode(f"reader:{FEED_PASSWORD}".encode()).decode() not in everything
    names = sorted(s["name"] for s in health.json()["sources"])
    assert names == sorted(
        [
            f"{feeds.base_url}/missing.json",
            f"{feeds.base_url}/ok.json",
            "http://127.0.0.1:1/nothing",
        ]
    )
    assert f'source="{feeds.base_url}/ok.json"' in metrics_text
    assert "HTTP Request: GET" in everything  # DEBUG did log the requests, redacted
    # The server did get the credentials: redaction is of what is shown, not what is sent.
    assert any(FEED_API_KEY in path for path in feeds.paths)


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_hanging_feed_delays_nothing_and_sigterm_still_exits_in_the_grace(
    tmp_path: Path, clean_env: dict[str, str], database_url: str
) -> None:
    wiki = tmp_path / "wiki"
    write(wiki, *page("papers/2026/beside-a-hanging-feed", tags="[rl]"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    engine = create_async_engine(database_url)
    async with FeedServer() as feeds, httpx.AsyncClient(timeout=10) as client:
        hanging = feeds.hang("/hang.xml")
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=f"{hanging},{wiki}",
            HTTP_PORT=str(port),
        )
        process = start_run(env, tmp_path)
        try:
            await feeds.wait_in_flight(1, seconds=60)
            await wait_healthy(client, f"{base}/healthz", process)

            # While the feed hangs: the directory beside it is recorded...
            async def directory_polled() -> bool:
                sources = (await client.get(f"{base}/healthz")).json()["sources"]
                return any(s["name"] == str(wiki) and s["last_ok_at"] for s in sources)

            await wait_until(directory_polled, what="the directory polled beside the hanging feed")
            # ...and the leader lease is renewed on its own schedule.
            first = await lease_expiry(engine)

            async def renewed() -> bool:
                return await lease_expiry(engine) > first

            await wait_until(renewed, what="the leader lease renewed")
            assert feeds.in_flight == 1  # still hanging
        finally:
            process.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            code = await asyncio.to_thread(process.wait, 60)
            took = time.monotonic() - signalled
    await engine.dispose()
    log = (tmp_path / "err.log").read_text()
    assert code == 0, log[-3000:]
    assert took < SHUTDOWN_TOTAL_SECONDS, f"took {took:.1f} s"
    assert "Traceback" not in log


async def lease_expiry(engine: AsyncEngine) -> dt.datetime:
    async with engine.connect() as conn:
        value = (
            await conn.execute(select(leases.c.expires_at).where(leases.c.name == LEADER))
        ).scalar_one_or_none()
    return value or dt.datetime.min
