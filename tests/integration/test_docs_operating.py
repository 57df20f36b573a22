"""The operating page's ``/healthz`` bullet against the answers of a real HTTP server on
each store: every key the server answers with is named there, healthy and not."""

from __future__ import annotations

import re

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.ops import web
from tests.conftest import ROOT


def _bullet() -> str:
    page = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
    start = page.index("- `GET /healthz`")
    return " ".join(page[start : page.index("\n- ", start + 1)].split())


def _named(bullet: str) -> set[str]:
    return set(re.findall(r'"([a-z_]+)"', bullet))


async def test_the_healthz_bullet_names_what_healthz_answers(engine: AsyncEngine) -> None:
    bullet = _bullet()
    assert bullet.count("(") == bullet.count(")")  # no half-sentence left open
    app = web.make_app(engine=engine, hooks=web.WebHooks())
    runner, port = await web.start(app, host="127.0.0.1", port=0)
    try:
        async with httpx.AsyncClient() as client:
            healthy = await client.get(f"http://127.0.0.1:{port}/healthz")
            async with engine.begin() as conn:  # a newer build migrated under this one
                await conn.execute(text("UPDATE alembic_version SET version_num = '0042_x'"))
            refused = await client.get(f"http://127.0.0.1:{port}/healthz")
    finally:
        await runner.cleanup()
    assert (healthy.status_code, refused.status_code) == (200, 503)
    named = _named(bullet)
    ok, unavailable = healthy.json(), refused.json()
    assert set(ok) <= named and ok["status"] in named and ok["database"] in named
    assert set(unavailable) <= named and unavailable["status"] in named
    assert set(ok["queue"]) <= named
    assert "200" in bullet and "503" in bullet
