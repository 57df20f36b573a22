"""A source has one identity: a stable id and a redacted name, and nothing else of its
configured URL is ever shown.

The leak test configures sources whose URLs carry credentials (user info, secret query
parameters, a token as user name), drives every output surface of a real deployment (each
chat command on Telegram, Slack and the console, every CLI command, ``/healthz`` and
``/metrics``, logs at DEBUG, an alert) and searches all of it for the credentials.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import signal
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.commands import KNOWN_COMMANDS
from bot.i18n import t
from bot.rules.urls import redact_url
from bot.sources import identify, source_id
from bot.util import utcnow
from tests.cli import run_cli, start_cli
from tests.fakes.feed_server import FeedServer, Served
from tests.fakes.slack_api import FakeSlack, shown_for_command, signed_headers
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import JSON_FEED_BODY, wait_healthy
from tests.ports import free_port
from tests.run_env import slack_env, telegram_env

PASSWORD = "pw4SourceIdentityLeak"
API_KEY = "apiKey4SourceIdentityLeak"
QUERY_TOKEN = "qToken4SourceIdentityLeak"
USER_TOKEN = "ghpUserToken4SourceIdentityLeak"  # https://TOKEN@host/…, as git hosts take one
SECRETS = (
    PASSWORD,
    API_KEY,
    QUERY_TOKEN,
    USER_TOKEN,
    base64.b64encode(f"reader:{PASSWORD}".encode()).decode(),
)
TELEGRAM_TOKEN = "123456789:AAHsourceIdentityTokenForTests_0123456789"
SIGNING_SECRET = "signingSecretForSourceIdentity0123"
TG_ADMIN = 7070
SLACK_ADMIN = "UOPSADMIN"
SLACK_DM = "DOPSADMIN"


def credentialed(base: str, path: str) -> str:
    """``base + path`` with a password, an API key and a token in it."""
    with_user = base.replace("http://", f"http://reader:{PASSWORD}@")
    return f"{with_user}{path}?api_key={API_KEY}&token={QUERY_TOKEN}&page=1"


async def _telegram_replies(tg: FakeTelegram, chat_id: int, lines: list[str]) -> list[str]:
    """Each line sent by the admin in their private chat; every text the bot sent back."""
    for line in lines:
        seen = len(tg.calls(ok=True))
        tg.message(chat_id, line, user_id=chat_id)
        await _settled(lambda: len(tg.calls(ok=True)), after=seen)
    return [json.dumps(call.params, ensure_ascii=False) for call in tg.calls()]


async def _settled(count: object, *, after: int) -> None:
    """Until a counter has grown past ``after`` and then stood still for a moment: a command
    may answer in several calls (a reply, then a digest)."""
    assert callable(count)
    deadline = time.monotonic() + 20
    last, still = -1, 0
    while time.monotonic() < deadline:
        now = count()
        if now > after and now == last:
            still += 1
            if still >= 3:
                return
        else:
            still = 0
        last = now
        await asyncio.sleep(0.1)  # nothing more for three looks in a row: time-based
    raise AssertionError("the bot never answered")


@pytest.mark.slow
@pytest.mark.timeout(400)
async def test_credentials_of_sources_reach_no_output_of_any_surface(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with (
        FeedServer() as feeds,
        FakeTelegram(token=TELEGRAM_TOKEN, long_poll_cap=0.2) as tg,
        FakeSlack() as sl,
        httpx.AsyncClient(timeout=10) as client,
    ):
        served = Served(body=JSON_FEED_BODY, content_type="application/feed+json")
        feeds.serve("/ok.json", served)
        feeds.serve("/user.json", served)
        ok = credentialed(feeds.base_url, "/ok.json")
        failing = credentialed(feeds.base_url, "/gone.json")  # 404: fails every poll
        user_token = feeds.base_url.replace("http://", f"http://{USER_TOKEN}@") + "/user.json"
        sl.add_channel("C1", name="general")
        sl.add_channel(SLACK_DM, user=SLACK_ADMIN)
        env = dict(
            clean_env,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/trendbot.db",
            WIKI_SOURCES=f"{ok},{failing},{user_token}",
            **telegram_env(tg),
            TELEGRAM_ADMIN_IDS=str(TG_ADMIN),
            **slack_env(sl, signing_secret=SIGNING_SECRET),
            SLACK_ADMIN_IDS=SLACK_ADMIN,
            ALERT_SOURCE_FAILURES="1",
            PUBLIC_BASE_URL="https://bot.example.org/trend",
            HTTP_PORT=str(port),
            LOG_LEVEL="DEBUG",
        )
        shown = dict(
            zip([ok, failing, user_token], identify([ok, failing, user_token]), strict=True)
        )
        outputs: list[str] = []

        async def cli(*args: str, stdin: str | None = None, **extra: str) -> str:
            """``trendbot args``; its stdout (all it printed is kept for the search)."""
            done = await asyncio.to_thread(
                run_cli, *args, env=dict(env, **extra), cwd=tmp_path, stdin=stdin
            )
            outputs.extend([done.stdout, done.stderr])
            assert done.returncode in (0, 1), done.stderr[-2000:]
            return done.stdout

        await cli("db", "upgrade")
        await cli("poll", LOG_FORMAT="json")
        assert f"source failed: {shown[failing].name}: HTTP 404" in outputs[-1]

        out_log, err_log = tmp_path / "out.log", tmp_path / "err.log"
        process = start_cli(env=env, cwd=tmp_path, out=out_log, err=err_log)
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            # The run's first poll fails the 404 feed once: with ALERT_SOURCE_FAILURES=1
            # that is an incident, told to the Slack admin in their DM with the app.
            await sl.wait_for(
                lambda c: c.method == "chat.postMessage" and c.params.get("channel") == SLACK_ADMIN,
                timeout=60,
            )
            (alert,) = [str(m["text"]) for m in sl.messages_to(SLACK_DM)]
            assert alert.startswith("🚨") and shown[failing].name in alert

            commands = sorted(KNOWN_COMMANDS - {"stats"})
            lines = ["/start", "/subscribe rl", "/stats", *[f"/{c}" for c in commands], "/stats"]
            telegram = await _telegram_replies(tg, TG_ADMIN, lines)
            assert any(f"Source {shown[ok].name}: last poll" in text for text in telegram)

            async def post(body: bytes) -> tuple[int, str]:
                headers = signed_headers(SIGNING_SECRET, body)
                answer = await client.post(f"{base}/slack/events", content=body, headers=headers)
                return answer.status_code, answer.text

            slack: list[str] = []
            for n, line in enumerate(["subscribe rl", "stats", *commands]):
                for channel in ("C1", SLACK_DM):
                    _, said = await shown_for_command(
                        sl,
                        post,
                        line,
                        response_name=f"r{n}{channel}",
                        user_id=SLACK_ADMIN,
                        channel_id=channel,
                    )
                    slack.append(json.dumps(said, ensure_ascii=False))
            assert any(f"Source {shown[ok].name}: last poll" in text for text in slack)

            health = (await client.get(f"{base}/healthz")).text
            metrics_text = (await client.get(f"{base}/metrics")).text
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)
        assert process.returncode == 0

        console = await cli(
            "console",
            stdin="\n".join(["/subscribe rl", "/stats", *[f"/{c}" for c in commands], "/quit"])
            + "\n",
        )
        assert f"Source {shown[ok].name}: last poll" in console
        await cli("digest", "--now")
        await cli("broadcast", "--text", "Hello", "--yes")
        await cli("audit")
        await cli("subscribers")
        await cli("subscribers", "--json")
        exported = await cli("export")
        (tmp_path / "chats.jsonl").write_text(exported, encoding="utf-8")
        await cli("import", str(tmp_path / "chats.jsonl"))
        await cli("--version")
        await cli("poll", "--backfill", "7", LOG_FORMAT="text")

    sent = [json.dumps(call.params, ensure_ascii=False) for call in sl.calls()]
    sent += [json.dumps(posts, ensure_ascii=False) for posts in sl.responses.values()]
    everything = "\n".join(
        [
            *outputs,
            out_log.read_text(),
            err_log.read_text(),
            *telegram,
            *slack,
            *sent,
            health,
            metrics_text,
            alert,
        ]
    )
    assert "HTTP Request: GET" in everything  # DEBUG did log the requests
    for secret in SECRETS:
        assert secret not in everything, f"{secret} reached the output"
    for configured in (ok, failing, user_token):
        assert configured not in everything

    sources = {s["name"]: s for s in json.loads(health)["sources"]}
    assert {name: s["id"] for name, s in sources.items()} == {s.name: s.id for s in shown.values()}
    assert sources[shown[failing].name]["failed_polls"] >= 1
    assert f'source="{shown[ok].name}"' in metrics_text
    # The server was sent the credentials: what is shown is redacted, not what is fetched.
    assert any(API_KEY in path for path in feeds.paths)


async def test_a_failing_credentialed_feed_raises_its_alert(
    tmp_path: Path, database_url: str
) -> None:
    """The service's poll records the feed's failures and its alert check finds them, by
    one identity: the alert fires and names the feed without its credentials."""
    from bot.app import open_app
    from bot.service import Service
    from bot.store import alerts as alert_store
    from tests.conftest import Settings

    async with FeedServer() as feeds:
        failing = credentialed(feeds.base_url, "/gone.json")
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None,
            database_url=database_url,
            wiki_sources=(failing,),
            alert_source_failures=2,
        )
        async with open_app(settings) as app:
            service = Service(app, console=False, serve_http=False, channels=False)
            await service.lease()  # the only replica: the leader, which polls and checks
            logs = []
            for _ in range(2):
                await service.poll_and_plan()  # poll, record it, plan, check for incidents
                async with app.engine.connect() as conn:
                    logs.append(await alert_store.incident_log(conn))
                    opened = await alert_store.open_incidents(conn)
    (source,) = identify([failing])
    assert logs[0] == []
    assert [key for key, _, _ in logs[1]] == [f"source:{source.id}"]
    assert list(opened) == [f"source:{source.id}"]
    text = t("en", "dest.alert.start.source", name=source.name, count=2, error="HTTP 404 Not Found")
    assert source.name in text and all(secret not in text for secret in SECRETS)


def test_ids_are_stable_under_credential_rotation_and_distinct_otherwise() -> None:
    a = source_id("https://u:one@feeds.example.org/f.json?api_key=1&lang=en")
    assert a == source_id("https://u:two@FEEDS.example.org/f.json?api_key=2&lang=en")
    assert a != source_id("https://feeds.example.org/f.json?lang=ko")
    assert source_id("examples/wiki") != source_id("examples/wiki2")


async def test_an_upgrade_keeps_the_streaks_and_open_incidents_of_sources(
    engine: AsyncEngine,
) -> None:
    """A former release keyed a source's streak and incident by its shown name: after the
    upgrade they are found under the source's id, so a failing source is neither announced
    again nor told recovered, and a streak short of the threshold goes on counting."""
    from bot.ops.alert_service import AlertService
    from bot.store import alerts as alert_store
    from bot.store.schema import incidents, source_streaks
    from tests.conftest import Settings

    down = "https://u:pw@feeds.example.org/down.json?api_key=k3y"
    flaky = "/srv/wiki"
    settings = Settings(_env_file=None, wiki_sources=(down, flaky))  # type: ignore[call-arg]
    then = utcnow() - dt.timedelta(hours=1)
    async with engine.begin() as conn:
        await conn.execute(
            insert(source_streaks),
            [
                {
                    "name": redact_url(down),
                    "failures": 5,
                    "last_error": "HTTP 503",
                    "updated_at": then,
                },
                {"name": flaky, "failures": 2, "last_error": "gone", "updated_at": then},
            ],
        )
        await alert_store.start_incident(
            conn, key="source:/srv/wiki", detail={"name": flaky}, now=then
        )
    down_id, flaky_id = (s.id for s in identify([down, flaky]))
    alerts = AlertService(engine=engine, settings=settings)

    await alerts.after_poll([(down, "HTTP 503"), (flaky, "gone")])
    changes = await alerts.check()
    # The flaky directory's incident stays open, unannounced; the feed's streak reaches 6.
    assert [(c.key, c.started) for c in changes] == [(f"source:{down_id}", True)]
    assert changes[0].params["count"] == 6
    async with engine.connect() as conn:
        assert set(await alert_store.open_incidents(conn)) == {
            f"source:{down_id}",
            f"source:{flaky_id}",
        }
        names = set((await conn.execute(select(source_streaks.c.name))).scalars())
        assert names == {down_id, flaky_id}
        keys = (await conn.execute(select(incidents.c.key))).scalars().all()
        assert not any("pw" in key or "k3y" in key for key in keys)

    await alerts.after_poll([(down, "HTTP 503"), (flaky, None)])
    changes = await alerts.check()
    assert [(c.key, c.started, c.params) for c in changes] == [
        (f"source:{flaky_id}", False, {"name": flaky, "count": 0, "error": "?"})
    ]
