"""The hostile-input corpus (tests/data/hostile/, see its README) through every entry point
that reads outside input: the directory scanner, the feed parser (each recorded on SQLite
and PostgreSQL) and the two webhooks of a real ``trendbot run``.

For each input: no exception escapes, no traceback reaches any output, and nothing is
recorded wrongly (a page to skip is not recorded, a page to keep is recorded within the
columns' bounds, a bad request changes nothing). A new case is a new file in the corpus.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.sources.bounds import MAX_KEY_CHARS, MAX_PAGE_TAGS, MAX_TITLE_CHARS, MAX_TLDR_CHARS
from bot.sources.entries import MAX_FEED_ENTRIES
from bot.sources.feed import make_feed_client
from bot.sources.poll import Poller
from bot.store.schema import audit_log, chats, page_tags, page_texts, pages, sources
from tests.cli import start_cli
from tests.fakes.slack_api import FakeSlack, signed_headers
from tests.fakes.telegram_api import FakeTelegram
from tests.integration.test_ops import wait_healthy
from tests.ports import free_port
from tests.run_env import slack_env, telegram_env

HOSTILE = Path(__file__).parents[1] / "data" / "hostile"
GOOD_PAGE = "---\ntitle: Good\ntags: [rl]\n---\n\n## TL;DR\n\nA finding.\n"
CONTENT_TYPES = {".xml": "application/xml", ".json": "application/feed+json"}
# Text that an external entity of the corpus would pull in, were it ever resolved.
LEAKED = ("root:x:0:0", "/bin/bash", "/usr/sbin/nologin")


def cases(folder: str) -> list[Path]:
    return sorted(p for p in (HOSTILE / folder).iterdir() if p.is_file())


def corpus_id(path: Path) -> str:
    return path.name


def content(path: Path) -> bytes:
    """A page's bytes: ``*.gz`` files of the corpus are stored compressed."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert record.exc_info is None, f"{record.name}: {record.getMessage()}"
        assert record.levelno < logging.ERROR, f"{record.name}: {record.getMessage()}"
        assert "Traceback" not in record.getMessage()


async def stored(engine: AsyncEngine) -> dict[str, dict[str, object]]:
    """Every recorded page by key, with its texts and tags."""
    async with engine.connect() as conn:
        rows = (await conn.execute(select(pages))).mappings().all()
        texts = (await conn.execute(select(page_texts))).mappings().all()
        tags = (await conn.execute(select(page_tags.c.page_id, page_tags.c.tag))).all()
    by_id = {
        row["id"]: {**row, "texts": [], "tags": []}  # type: ignore[dict-item]
        for row in rows
    }
    for text in texts:
        by_id[text["page_id"]]["texts"].append(text)  # type: ignore[attr-defined]
    for page_id, tag in tags:
        by_id[page_id]["tags"].append(tag)  # type: ignore[attr-defined]
    return {str(page["key"]): page for page in by_id.values()}


def within_bounds(page: dict[str, object]) -> None:
    assert len(str(page["key"])) <= MAX_KEY_CHARS
    assert len(page["tags"]) <= MAX_PAGE_TAGS  # type: ignore[arg-type]
    for text in page["texts"]:  # type: ignore[attr-defined]
        assert len(text["title"]) <= MAX_TITLE_CHARS
        assert len(text["tldr"]) <= MAX_TLDR_CHARS
        for leak in LEAKED:
            assert leak not in text["title"] + text["tldr"]


# --- pages through the directory scanner ---------------------------------------------------


@pytest.mark.parametrize("path", cases("pages"), ids=corpus_id)
async def test_a_hostile_page(
    path: Path, engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "papers" / "2026").mkdir(parents=True)
    (wiki / "papers" / "2026" / "good.md").write_text(GOOD_PAGE)
    name = path.name.removesuffix(".gz")
    (wiki / "papers" / "2026" / name).write_bytes(content(path))
    poller = Poller(
        engine=engine,
        sources=[str(wiki)],
        base_url=None,
        default_lang="en",
        http=make_feed_client(),
    )
    with caplog.at_level(logging.DEBUG):
        first = await poller.poll()
        again = await poller.poll()
    no_traceback(caplog)
    assert [o.error for o in first.outcomes] == [None]
    recorded = await stored(engine)
    key = "papers/2026/" + name.removesuffix(".md")
    if name.startswith("skip-"):
        assert (first.new, first.skipped) == (1, 1)
        assert set(recorded) == {"papers/2026/good"}
        skipped = [r for r in caplog.records if f"skipped papers/2026/{name}" in r.getMessage()]
        assert len(skipped) == 1  # one line naming the file and the reason, once
    else:
        assert (first.new, first.skipped) == (2, 0)
        assert set(recorded) == {"papers/2026/good", key}
    for page in recorded.values():
        within_bounds(page)
    assert (again.new, again.updated, again.skipped) == (0, 0, first.skipped)


# --- feeds through the feed parser -----------------------------------------------------------


def serving(path: Path) -> httpx.MockTransport:
    """Serve a corpus feed as a server streams it; ``*.gz`` as ``Content-Encoding: gzip``."""
    body = path.read_bytes()
    inner = Path(path.name.removesuffix(".gz"))
    headers = {"Content-Type": CONTENT_TYPES.get(inner.suffix, "application/octet-stream")}
    if path.suffix == ".gz":
        headers["Content-Encoding"] = "gzip"

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    return httpx.MockTransport(
        lambda request: httpx.Response(200, content=chunks(), headers=headers)
    )


@pytest.mark.parametrize("path", cases("feeds"), ids=corpus_id)
async def test_a_hostile_feed(
    path: Path, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"https://feeds.example.org/{path.name}"
    poller = Poller(
        engine=engine,
        sources=[url],
        base_url=None,
        default_lang="en",
        http=make_feed_client(transport=serving(path)),
    )
    with caplog.at_level(logging.DEBUG):
        summary = await poller.poll()
    no_traceback(caplog)
    (outcome,) = summary.outcomes
    recorded = await stored(engine)
    async with engine.connect() as conn:
        (last_error,) = (await conn.execute(select(sources.c.last_error))).one()
    if path.name.startswith("fail-"):
        assert outcome.error is not None and "Traceback" not in outcome.error
        assert last_error == outcome.error  # /healthz shows it for this source
        assert recorded == {}
    else:
        assert outcome.error is None and last_error is None
        assert 1 <= len(recorded) <= MAX_FEED_ENTRIES
    for page in recorded.values():
        within_bounds(page)


# Entries with content only: their TL;DR is the text of the content's first paragraph, never
# its markup (an image, a comment, a script).
CONTENT_ONLY = {
    "keep-content-only-atom03.xml": {
        "urn:content-only:escaped": "Rollouts in FP8 halve the memory.",
        "urn:content-only:xml": "Evolution strategies explore more.",
        "urn:content-only:base64": "Rewards without labels.",
    },
    "keep-xhtml-body.xml": {"urn:xhtml-body:1": "Sparse mixtures reach long context."},
}


@pytest.mark.parametrize("name", sorted(CONTENT_ONLY))
async def test_an_entry_with_content_only_has_the_text_of_its_content(
    name: str, engine: AsyncEngine
) -> None:
    poller = Poller(
        engine=engine,
        sources=[f"https://feeds.example.org/{name}"],
        base_url=None,
        default_lang="en",
        http=make_feed_client(transport=serving(HOSTILE / "feeds" / name)),
    )
    (outcome,) = (await poller.poll()).outcomes
    assert outcome.error is None
    recorded = await stored(engine)
    tldrs = {
        key: [text["tldr"] for text in page["texts"]]  # type: ignore[attr-defined]
        for key, page in recorded.items()
    }
    assert tldrs == {key: [tldr] for key, tldr in CONTENT_ONLY[name].items()}


# --- request bodies through both webhooks of a real run --------------------------------------

TELEGRAM_TOKEN = "123456789:AAHhostileCorpusTokenValue_0123456789ab"
WEBHOOK_SECRET = "hostileCorpusWebhookSecret"
SLACK_TOKEN = "xoxb-1-hostile"
SIGNING_SECRET = "hostileCorpusSigningSecret0123"


@dataclass
class Run:
    base: str
    log: Path
    database: str
    client: httpx.AsyncClient

    def log_size(self) -> int:
        return self.log.stat().st_size

    def log_since(self, offset: int) -> str:
        with self.log.open("rb") as file:
            file.seek(offset)
            return file.read().decode("utf-8", "replace")

    async def changed_rows(self) -> int:
        engine = create_async_engine(self.database)
        try:
            async with engine.connect() as conn:
                counted = 0
                for table in (chats, audit_log):
                    query = select(func.count()).select_from(table)
                    counted += int((await conn.execute(query)).scalar_one())
                return counted
        finally:
            await engine.dispose()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def run(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Run]:
    """One ``trendbot run`` with both webhooks (Telegram webhook mode, Slack HTTP mode)."""
    import os

    from tests.conftest import CONTRACT_VARIABLES

    tmp_path = tmp_path_factory.mktemp("hostile-run")
    (tmp_path / "wiki").mkdir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    database = f"sqlite+aiosqlite:///{tmp_path}/trendbot.db"
    env = {k: v for k, v in os.environ.items() if k not in CONTRACT_VARIABLES}
    async with (
        FakeTelegram(token=TELEGRAM_TOKEN, long_poll_cap=0.2) as tg,
        FakeSlack(token=SLACK_TOKEN) as sl,
        httpx.AsyncClient(timeout=30) as client,
    ):
        env.update(
            DATABASE_URL=database,
            WIKI_SOURCES=str(tmp_path / "wiki"),
            **telegram_env(tg, webhook_secret=WEBHOOK_SECRET),
            **slack_env(sl, signing_secret=SIGNING_SECRET),
            HTTP_PORT=str(port),
            PTB_TIMEDELTA="true",
            PYTHONUNBUFFERED="1",
        )
        log = tmp_path / "run.log"
        process = start_cli(env=env, cwd=tmp_path, out=log, err=log)
        try:
            await wait_healthy(client, f"{base}/healthz", process)
            yield Run(base=base, log=log, database=database, client=client)
        finally:
            process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(process.wait, 60)


def request_cases(platform: str) -> list[object]:
    return [pytest.param(path, id=path.name) for path in cases(f"request-bodies/{platform}")]


async def post_and_check(
    run: Run, path: str, body: bytes, headers: dict[str, str], expected: int
) -> None:
    offset = run.log_size()
    rows = await run.changed_rows()
    answer = await run.client.post(f"{run.base}{path}", content=body, headers=headers)
    # The server logs what a request caused before it answers.
    assert "Traceback" not in run.log_since(offset)
    assert answer.status_code == expected, answer.text[:300]
    assert await run.changed_rows() == rows  # nothing changed


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("path", request_cases("slack"))
async def test_a_hostile_slack_body_unsigned_is_401(run: Run, path: Path) -> None:
    body = await asyncio.to_thread(path.read_bytes)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    await post_and_check(run, "/slack/events", body, headers, 401)


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("path", request_cases("slack"))
async def test_a_hostile_slack_body_signed_is_400(run: Run, path: Path) -> None:
    body = await asyncio.to_thread(path.read_bytes)
    await post_and_check(run, "/slack/events", body, signed_headers(SIGNING_SECRET, body), 400)


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    "timestamp",
    [
        "abc",
        "",
        "99999999999999999999999",
        "-1",
    ],
)
async def test_a_malformed_slack_timestamp_is_401(run: Run, timestamp: str) -> None:
    body = b"command=%2Ftrend&text=settings"
    headers = dict(signed_headers(SIGNING_SECRET, body), **{"X-Slack-Request-Timestamp": timestamp})
    await post_and_check(run, "/slack/events", body, headers, 401)


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("path", request_cases("telegram"))
async def test_a_hostile_telegram_body_without_the_secret_is_401(run: Run, path: Path) -> None:
    headers = {"X-Telegram-Bot-Api-Secret-Token": "wrong", "Content-Type": "application/json"}
    await post_and_check(
        run, "/telegram/webhook", await asyncio.to_thread(path.read_bytes), headers, 401
    )


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("path", request_cases("telegram"))
async def test_a_hostile_telegram_body_with_the_secret_is_400(run: Run, path: Path) -> None:
    headers = {
        "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET,
        "Content-Type": "application/json",
    }
    await post_and_check(
        run, "/telegram/webhook", await asyncio.to_thread(path.read_bytes), headers, 400
    )
