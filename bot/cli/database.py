"""The store's administration: ``trendbot db upgrade``, ``trendbot db backup``, and
``trendbot export`` and ``trendbot import``, which move a deployment's chats."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli import EXIT_CONFIG, EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from bot.settings import Settings


async def db(settings: Settings, args: argparse.Namespace) -> int:
    if args.db_command == "backup":
        return await _db_backup(settings, args)
    return await _db_upgrade(settings, args)


async def _db_upgrade(settings: Settings, _args: argparse.Namespace) -> int:
    from bot.store import backup
    from bot.store.engine import create_engine

    engine = create_engine(settings.database_url)
    try:
        # Its report on stdout: the copy kept, the database created, the revisions.
        done = await backup.migrate(engine, settings.database_url, tell=print)
    finally:
        await engine.dispose()
    print(done.line())
    return EXIT_OK


async def _db_backup(settings: Settings, args: argparse.Namespace) -> int:
    from bot.store import backup

    source = backup.sqlite_file(settings.database_url)
    if source is None:
        print(f"trendbot db backup: {backup.NOT_SQLITE}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        await asyncio.to_thread(backup.copy, source, Path(args.file))
    except backup.BackupError as exc:
        print(f"trendbot db backup: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"backup of {source} written to {args.file}")
    return EXIT_OK


async def export(settings: Settings, args: argparse.Namespace) -> int:
    from bot.matching.transfer import export_record
    from bot.store import chats as chat_store
    from bot.store.backup import open_store
    from bot.store.engine import reader

    async with open_store(settings.database_url) as engine, reader(engine).connect() as conn:
        if args.chat is not None:
            platform, chat_id = args.chat
            found = await chat_store.get(conn, platform=platform, chat_id=chat_id)
            if found is None:
                print(f"no such chat: {platform.value}:{chat_id}", file=sys.stderr)
                return EXIT_FAILED
            records = [found]
        else:
            records = await chat_store.listing(conn)
    for record in records:
        print(json.dumps(export_record(record.chat), ensure_ascii=False))
    return EXIT_OK


async def import_(settings: Settings, args: argparse.Namespace) -> int:
    from bot.errors import TransferError
    from bot.matching.transfer import describe_error, parse_record
    from bot.store import chats as chat_store
    from bot.store.backup import open_store

    try:
        if args.file == "-":
            text = await asyncio.to_thread(sys.stdin.read)
        else:
            text = await asyncio.to_thread(Path(args.file).read_text, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"trendbot import: cannot read {args.file}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    imported = skipped = 0
    async with open_store(settings.database_url) as engine:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = parse_record(line)
            except TransferError as exc:
                print(f"line {number}: skipped: {describe_error(exc)}", file=sys.stderr)
                skipped += 1
                continue
            async with engine.begin() as conn:  # the whole line, or none of it
                found = await chat_store.get(conn, platform=entry.platform, chat_id=entry.chat_id)
                if found is None:
                    await chat_store.ensure(conn, defaults=entry.settings())
                else:
                    await chat_store.save(conn, before=found, after=entry.settings(found.chat))
            imported += 1
    print(f"imported: {imported}, skipped: {skipped}")
    return EXIT_FAILED if skipped else EXIT_OK
