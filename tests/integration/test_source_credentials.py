"""A feed's credentials are a type, not a string: they reach its server and nothing else.

Two private feeds (Atom and RSS) need HTTP Basic credentials and a token in the query; their
entries link relatively (``<link href="papers/rel1"/>``, ``<link href=""/>``, an RSS
``<link>item/1</link>``), have relative ids, and one echoes the credentials in an absolute
link. Real ``trendbot`` processes poll them, send digests to the Telegram and Slack fakes,
answer ``latest`` and ``feed`` on the console and serve the private Atom feed; the
credentials are then searched for in all of it, in every text column of every table, in
the database file itself and in a backup.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import signal
from pathlib import Path

import httpx
import pytest
from sqlalchemy import String, Text, select
from sqlalchemy.ext.asyncio import create_async_engine

from bot.sources.git import clone_directory
from bot.store.schema import metadata
from tests.cli import run_cli, start_cli
from tests.fakes.feed_server import FeedServer, Served
from tests.fakes.git_server import GitServer, Wiki
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import wait_healthy
from tests.ports import free_port
from tests.run_env import slack_env, telegram_env

USER = "feedReader"
PASSWORD = "PASSw0rdOfTheFeed"
TOKEN = "TOKofThePrivateFeed42"
SECRETS = (PASSWORD, TOKEN, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
TELEGRAM_TOKEN = "123456789:AAHcredentialsAreATypeNotAString_012345"
SIGNING_SECRET = "signingSecretForCredentials0123456"
TELEGRAM_CHAT = 4242
SLACK_CHANNEL = "CCREDS1"
TODAY = dt.date.today().isoformat()


def atom(echo: str) -> bytes:
    """An Atom feed whose links and ids are relative, one link empty, one an echo."""
    return f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Private wiki</title><id>urn:private-wiki</id><updated>{TODAY}T08:00:00Z</updated>
  <entry><id>papers/rel-id-1</id><title>Relative one</title><link href="papers/rel1"/>
    <updated>{TODAY}T08:00:00Z</updated><category term="rl"/><summary>First.</summary></entry>
  <entry><id>tag:wiki.example,2026:2</id><title>Empty link</title><link href=""/>
    <updated>{TODAY}T08:00:00Z</updated><category term="rl"/><summary>Second.</summary></entry>
  <entry><title>No id</title><link href="papers/rel3"/>
    <updated>{TODAY}T08:00:00Z</updated><category term="rl"/><summary>Third.</summary></entry>
  <entry><id>urn:wiki:4</id><title>Echo</title><link href="{echo}"/>
    <updated>{TODAY}T08:00:00Z</updated><category term="rl"/><summary>Fourth.</summary></entry>
</feed>""".encode()


RSS = f"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>Private RSS</title><link>item/</link>
  <item><title>RSS relative</title><link>item/1</link><guid>item/1</guid>
    <pubDate>{dt.date.today():%a, %d %b %Y} 08:00:00 GMT</pubDate>
    <category>rl</category><description>Fifth.</description></item>
</channel></rss>""".encode()


async def _everything_stored(database_url: str) -> list[str]:
    """Every value of every text column of every table, as text."""
    found: list[str] = []
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as conn:
            for table in metadata.sorted_tables:
                columns = [c for c in table.columns if isinstance(c.type, (String, Text))]
                if not columns:
                    continue
                for row in await conn.execute(select(*columns)):
                    found.extend(str(value) for value in row if value is not None)
    finally:
        await engine.dispose()
    return found


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_credentials_of_a_feed_reach_its_server_and_nothing_else(
    tmp_path: Path, database_url: str, clean_env: dict[str, str]
) -> None:
    port = free_port()
    async with (
        FeedServer() as feeds,
        FakeTelegram(token=TELEGRAM_TOKEN, long_poll_cap=0.2) as tg,
        FakeSlack() as sl,
        httpx.AsyncClient(timeout=10) as client,
    ):
        host = feeds.base_url.removeprefix("http://")
        echo = f"http://{USER}:{PASSWORD}@{host}/feeds/echo?token={TOKEN}"
        for path, body, kind in (
            ("/feeds/wiki.atom", atom(echo), "application/atom+xml"),
            ("/feeds/wiki.rss", RSS, "application/rss+xml"),
        ):
            private = Served(body, kind, basic=(USER, PASSWORD), query=(("token", TOKEN),))
            feeds.serve(path, private)
        credentialed = f"http://{USER}:{PASSWORD}@{host}"
        sources = [
            f"{credentialed}/feeds/wiki.atom?token={TOKEN}",
            f"{credentialed}/feeds/wiki.rss?format=rss&token={TOKEN}",
        ]
        sl.add_channel(SLACK_CHANNEL, name="papers")
        backup = tmp_path / "backup.db"
        env = dict(
            clean_env,
            DATABASE_URL=database_url,
            WIKI_SOURCES=",".join(sources),
            **telegram_env(tg),
            **slack_env(sl, signing_secret=SIGNING_SECRET),
            PUBLIC_BASE_URL="https://bot.example.org/trend",
            HTTP_PORT=str(port),
            LOG_LEVEL="DEBUG",
        )
        outputs: list[str] = []

        async def cli(*args: str, stdin: str | None = None) -> str:
            done = await asyncio.to_thread(run_cli, *args, env=env, cwd=tmp_path, stdin=stdin)
            outputs.extend([done.stdout, done.stderr])
            assert done.returncode == 0, done.stderr[-3000:]
            return done.stdout

        chats = tmp_path / "chats.jsonl"
        line = 'trendbot:1 filter="rl" mode=daily time=09:00 tz=UTC lang=en'
        chats.write_text(
            json.dumps({"chat": f"telegram:{TELEGRAM_CHAT}", "settings": line})
            + "\n"
            + json.dumps({"chat": f"slack:{SLACK_CHANNEL}", "kind": "group", "settings": line})
            + "\n",
            encoding="utf-8",
        )
        await cli("import", str(chats))
        assert (await cli("poll")).splitlines()[-1] == (
            "5 new, 0 updated, 0 skipped (baseline: nothing queued)"
        )
        await cli("poll", "--backfill", "30")
        await cli("digest", "--now")
        console = await cli(
            "console", stdin="/subscribe rl\n/latest 20\n/feed\n/why papers/rel1\n/quit\n"
        )
        token_url = next(
            word for word in console.split() if word.startswith("https://bot.example.org/")
        )
        feed_path = token_url.removeprefix("https://bot.example.org/trend")
        await cli("stats")
        if database_url.startswith("sqlite"):
            await cli("db", "backup", str(backup))

        out_log, err_log = tmp_path / "out.log", tmp_path / "err.log"
        process = start_cli(env=env, cwd=tmp_path, out=out_log, err=err_log)
        try:
            await wait_healthy(client, f"http://127.0.0.1:{port}/healthz", process)
            served_feed = (await client.get(f"http://127.0.0.1:{port}{feed_path}")).text
            health = (await client.get(f"http://127.0.0.1:{port}/healthz")).text
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)

    telegram = [json.dumps(call.params, ensure_ascii=False) for call in tg.calls()]
    slack = [json.dumps(call.params, ensure_ascii=False) for call in sl.calls()]
    stored = await _everything_stored(database_url)
    files = b""
    if database_url.startswith("sqlite"):
        db = Path(database_url.split("///", 1)[1])
        files = b"".join(
            path.read_bytes() for path in (db, backup, *db.parent.glob(f"{db.name}-*"))
        )
    shown = "\n".join(
        [
            *outputs,
            out_log.read_text(),
            err_log.read_text(),
            *telegram,
            *slack,
            served_feed,
            health,
            *stored,
        ]
    )

    # The feed server was given the credentials (it answers nothing without them)...
    assert all(path.endswith(f"token={TOKEN}") for path in feeds.paths), feeds.paths
    # ...the relative links resolve against the public URL, and reached the chats...
    public_link = f"http://{host}/feeds/papers/rel1"
    assert any(public_link in text for text in telegram)
    assert any(public_link in text for text in slack)
    assert public_link in served_feed and f"http://{host}/feeds/item/1" in console
    assert f"http://{host}/feeds/papers/rel-id-1" in stored  # a relative id, as a page key
    # ...and nothing of the credentials is anywhere.
    for secret in SECRETS:
        assert secret not in shown, f"{secret} reached an output or the database"
        assert secret.encode() not in files, f"{secret} is in a database file"
    assert f"{USER}:" not in shown and "@" + host not in shown


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_git_token_reaches_git_and_no_file_and_an_earlier_clone_goes(
    tmp_path: Path, clean_env: dict[str, str]
) -> None:
    """``trendbot poll`` of a private repository: git is given the token (the server
    answers nothing without it), the clone's files hold none of it, and the clone an earlier
    build made (named by the URL as configured, the token in its config) is removed."""
    root = tmp_path / "server"
    root.mkdir()
    wiki = Wiki(root, tmp_path / "work")
    wiki.write("wiki/papers/2026/2608.1-a.md", "---\ntitle: A\ntags: [rl]\n---\n\nA.\n")
    wiki.commit("a page")
    async with GitServer(root, credentials=("reader", PASSWORD)) as server:
        remote = server.base_url.replace("://", f"://reader:{PASSWORD}@") + "/wiki.git"
        source = f"git+{remote}@main#subdirectory=wiki"
        data = tmp_path / "data"
        earlier = clone_directory(data, source)  # as the earlier build named it
        earlier.mkdir(parents=True)
        (earlier / "config").write_text(f'[remote "origin"]\n\turl = "{remote}"\n')
        env = dict(
            clean_env,
            DATABASE_URL=f"sqlite+aiosqlite:///{data}/trendbot.db",
            WIKI_SOURCES=source,
            LOG_LEVEL="DEBUG",
        )
        done = await asyncio.to_thread(run_cli, "poll", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1 new, 0 updated, 0 skipped (baseline: nothing queued)"
    assert not earlier.exists()
    files = [path for path in data.rglob("*") if path.is_file()]
    assert len(files) > 3  # the database and the clone
    for path in files:
        assert PASSWORD.encode() not in path.read_bytes(), path
    assert PASSWORD not in done.stdout + done.stderr
