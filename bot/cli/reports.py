"""What an operator reads of a deployment: ``trendbot subscribers``, ``trendbot stats``
and ``trendbot audit``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from bot.cli import EXIT_OK

if TYPE_CHECKING:
    from bot.settings import Settings


async def subscribers(settings: Settings, args: argparse.Namespace) -> int:
    from bot.store import chats as chat_store
    from bot.store.backup import open_store
    from bot.store.engine import reader

    async with open_store(settings.database_url) as engine, reader(engine).connect() as conn:
        records = await chat_store.listing(conn)
    for record in records:
        fields = chat_store.describe(record)
        if args.json:
            print(json.dumps(fields, ensure_ascii=False))
        else:
            chat = fields.pop("chat")
            filter_text = fields.pop("filter")
            rest = " ".join(f"{k}={v}" for k, v in fields.items())
            print(f'{chat} {rest} filter="{filter_text}"')
    return EXIT_OK


async def stats(settings: Settings, args: argparse.Namespace) -> int:
    from bot.commands.operator import Admin
    from bot.store import admin as admin_store
    from bot.store.backup import open_store

    async with open_store(settings.database_url) as engine, engine.begin() as conn:
        figures = await Admin(engine=engine, settings=settings).figures(conn)
        await admin_store.audit(
            conn, actor="shell", chat=None, action="stats.viewed", allowed=True, detail=None
        )
    if args.json:
        print(json.dumps(figures.as_json(), ensure_ascii=False))
    else:
        print(figures.text("en"))
    return EXIT_OK


async def audit(settings: Settings, args: argparse.Namespace) -> int:
    from bot.store import admin as admin_store
    from bot.store.backup import open_store
    from bot.store.engine import reader

    async with open_store(settings.database_url) as engine, reader(engine).connect() as conn:
        entries = await admin_store.audit_entries(conn, since=args.since)
    for entry in entries:
        verdict = "allowed" if entry["allowed"] else "refused"
        where = f" in {entry['chat']}" if entry["chat"] else ""
        detail = f" {entry['detail']}" if entry["detail"] else ""
        print(
            f"{entry['at'].isoformat(timespec='seconds')}Z {entry['actor']}{where} "
            f"{entry['action']} {verdict}{detail}"
        )
    return EXIT_OK
