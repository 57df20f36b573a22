"""The ``trendbot`` command line; the only place settings are read from the environment."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from bot.errors import ConfigError, DeliveryError, SchemaError
from bot.models import LANGUAGES, Platform

# Each command imports what it needs when it runs, so `trendbot --help` and the one-shot
# reports load no chat library, migration tool or metrics client they do not use.
if TYPE_CHECKING:
    from bot.settings import Settings

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2

Handler = Callable[["Settings", argparse.Namespace], Coroutine[Any, Any, int]]

# Bounds of the options: past them a date or an age no longer fits a datetime.
MAX_BACKFILL_DAYS = 36_500  # a hundred years: every page a wiki can date
MAX_AGE_DAYS = 36_500  # the oldest ``audit --since`` age


class _Parser(argparse.ArgumentParser):
    """An argument error is one line, naming the option and what it accepts; exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_CONFIG, f"{self.prog}: {message} (see {self.prog} --help)\n")


# What `trendbot COMMAND --help` says about each command.
DESCRIPTIONS = {
    "run": (
        "Run the service: the chat channels (Telegram, Slack, or the console on a terminal "
        "when no token is set), the scheduler that polls sources and plans digests, the "
        "delivery workers and the HTTP server. SIGTERM or SIGINT stops it cleanly."
    ),
    "console": (
        "Chat with the bot in this terminal, with the same commands as Telegram and Slack; "
        "what it would post to the chat is printed. No HTTP server and no chat platform."
    ),
    "poll": (
        "Scan every source once, record new and changed pages and queue the notifications "
        "they cause; prints 'N new, M updated, K skipped'. Exit 1 when every source failed."
    ),
    "digest": (
        "Build and send, now, every digest that has something new, whatever the schedule; "
        "never sends a page to a chat twice."
    ),
    "broadcast": (
        "Send an admin message to every chat that follows something (or those --tag, "
        "--platform and --lang select), through the rate-limited delivery. Asks before "
        "sending unless --yes; exit 1 when no chat would receive it."
    ),
    "audit": "List admin actions and refused attempts, oldest first.",
    "subscribers": "One line per chat: state, mode, digest time, zone, language and filter.",
    "stats": (
        "The figures of the chat command 'stats' for the whole deployment: chats by platform "
        "and state, the most followed tags, pages, deliveries of the last 24 hours and what "
        "is queued, failure reasons, sources and broadcasts going out."
    ),
    "export": (
        "Print every chat's settings (or one chat's, with --chat) as JSON lines, for moving "
        "a deployment: 'trendbot import' on the new one applies them."
    ),
    "import": (
        "Apply the JSON lines of 'trendbot export': each line all or nothing; a bad line is "
        "named and skipped, and the exit code is then 1."
    ),
    "db": (
        "Database maintenance: 'trendbot db upgrade' applies schema migrations (on SQLite "
        "after a backup of the file beside it); 'trendbot db backup FILE' copies a SQLite "
        "database consistently, also while 'trendbot run' is running."
    ),
}


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="trendbot", description="TL;DR digests of new AI research wiki pages.")
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    commands.add_parser(
        "run",
        help="the service: chat channels, scheduler, delivery, HTTP server",
        description=DESCRIPTIONS["run"],
    )
    commands.add_parser(
        "console", help="chat with the bot in this terminal", description=DESCRIPTIONS["console"]
    )

    poll = commands.add_parser(
        "poll",
        help="scan every source once and queue notifications",
        description=DESCRIPTIONS["poll"],
    )
    poll.add_argument(
        "--backfill",
        type=_non_negative_int,
        metavar="DAYS",
        help="also notify about pages dated within the last DAYS days",
    )

    digest = commands.add_parser(
        "digest", help="build and send pending digests", description=DESCRIPTIONS["digest"]
    )
    digest.add_argument(
        "--now", action="store_true", required=True, help="now, whatever the schedule"
    )
    digest.add_argument(
        "--chat", type=_chat_address, metavar="PLATFORM:CHAT_ID", help="only this chat"
    )

    broadcast = commands.add_parser(
        "broadcast", help="send a message to many chats", description=DESCRIPTIONS["broadcast"]
    )
    broadcast.add_argument("--text", required=True, help="the message, sent as plain text")
    broadcast.add_argument(
        "--tag",
        action="append",
        default=[],
        type=_tag,
        help="only chats following TAG (repeatable)",
    )
    only = broadcast.add_argument("--platform", help="only this platform")
    only.choices = _RemotePlatforms()  # set after: add_argument would read them at once
    broadcast.add_argument("--lang", choices=list(LANGUAGES), help="only chats in this language")
    broadcast.add_argument("--yes", action="store_true", help="send without asking")

    audit = commands.add_parser(
        "audit", help="admin actions and refused attempts", description=DESCRIPTIONS["audit"]
    )
    audit.add_argument(
        "--since",
        type=_since,
        metavar="WHEN",
        help="an ISO date or time (UTC), or an age such as 24h or 7d",
    )

    subscribers = commands.add_parser(
        "subscribers", help="list chats and their settings", description=DESCRIPTIONS["subscribers"]
    )
    subscribers.add_argument("--json", action="store_true", help="one JSON object per line")

    stats = commands.add_parser(
        "stats",
        help="the deployment's figures, as the chat command stats",
        description=DESCRIPTIONS["stats"],
    )
    stats.add_argument("--json", action="store_true", help="one JSON object")

    export = commands.add_parser(
        "export", help="every chat's settings as JSON lines", description=DESCRIPTIONS["export"]
    )
    export.add_argument(
        "--chat", type=_chat_address, metavar="PLATFORM:CHAT_ID", help="only this chat"
    )
    import_ = commands.add_parser(
        "import", help="apply the JSON lines of export", description=DESCRIPTIONS["import"]
    )
    import_.add_argument("file", metavar="FILE", help="a file written by export; - for stdin")

    db = commands.add_parser("db", help="database maintenance", description=DESCRIPTIONS["db"])
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    db_commands.add_parser("upgrade", help="apply schema migrations")
    backup = db_commands.add_parser("backup", help="a consistent copy of a SQLite database")
    backup.add_argument("file", metavar="FILE", help="where the copy goes (must not exist)")
    return parser


class _Version(argparse.Action):
    """``--version``, reading the package's metadata only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        from bot import version

        print(f"trendbot {version()}")
        parser.exit(EXIT_OK)


def _non_negative_int(value: str) -> int:
    accepted = f"a whole number of days from 0 to {MAX_BACKFILL_DAYS}"
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_shown(value)} is not {accepted}") from None
    if not 0 <= number <= MAX_BACKFILL_DAYS:
        raise argparse.ArgumentTypeError(f"must be {accepted}")
    return number


def _since(value: str) -> dt.datetime:
    accepted = (
        f"an ISO date or time (UTC), or an age such as 24h or 7d of at most {MAX_AGE_DAYS} days"
    )
    text = value.strip().lower()
    units = {"m": 60, "h": 3600, "d": 86400}
    if text[:-1].isascii() and text[:-1].isdigit() and text[-1:] in units:
        seconds = int(text[:-1]) * units[text[-1]]
        if seconds > MAX_AGE_DAYS * 86400:
            raise argparse.ArgumentTypeError(f"{_shown(value)} is too old; must be {accepted}")
        return dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=seconds)
    try:
        moment = dt.datetime.fromisoformat(value.strip())
        return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment.tzinfo else moment
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"{_shown(value)} is not {accepted}") from None


def _tag(value: str) -> str:
    from bot.errors import FilterError
    from bot.matching.filters import parse_items

    try:
        items = parse_items([value])
    except FilterError:
        items = ()
    if len(items) != 1 or items[0].kind != "any":
        raise argparse.ArgumentTypeError(
            f"{_shown(value)} is not a tag; a tag is 1-64 letters, digits, '-', '_' or '.', e.g. rl"
        )
    return items[0].tag


def _shown(value: str) -> str:
    """An argument as an error line echoes it: quoted, on one line, not too long."""
    text = value if len(value) <= 40 else value[:39] + "…"
    return repr(text)


class _RemotePlatforms:
    """The platforms a broadcast may name, as argparse's choices: read from the registry
    (:mod:`bot.channels.registry`) only when the option is used, not for ``--help``."""

    def __iter__(self) -> Iterator[str]:
        return iter(_platforms().broadcast_names())

    def __contains__(self, value: object) -> bool:
        return value in _platforms().broadcast_names()


def _platforms() -> ModuleType:
    """:mod:`bot.platforms`, with every platform package of the registry registered."""
    import bot.channels.registry  # noqa: F401
    from bot import platforms

    return platforms


def _chat_address(value: str) -> tuple[Platform, str]:
    _platforms()
    platform, sep, chat_id = value.partition(":")
    try:
        parsed = Platform(platform.lower())
    except ValueError:
        parsed = None
    if not sep or parsed is None or not chat_id.strip():
        raise argparse.ArgumentTypeError(
            f"{value!r} is not PLATFORM:CHAT_ID, e.g. telegram:1001 or slack:C0123"
        )
    return parsed, chat_id.strip()


async def _poll(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_app

    async with open_app(settings) as app:
        summary = await app.poller.poll(backfill_days=args.backfill, log_summary=False)
    for outcome in summary.outcomes:
        if outcome.error:
            print(f"source failed: {outcome.shown}: {outcome.error}", file=sys.stderr)
    print(summary.line(), flush=True)
    return EXIT_FAILED if summary.all_failed else EXIT_OK


async def _db(settings: Settings, args: argparse.Namespace) -> int:
    if args.db_command == "backup":
        return await _db_backup(settings, args)
    return await _db_upgrade(settings, args)


async def _db_upgrade(settings: Settings, _args: argparse.Namespace) -> int:
    from bot.store import backup
    from bot.store.engine import (
        create_engine,
        head_revision,
        schema_verdict,
        stamped_revision,
        upgrade,
    )

    engine = create_engine(settings.database_url)
    try:
        stamped = await stamped_revision(engine)
        source = backup.sqlite_file(settings.database_url)
        known = schema_verdict(stamped) is None  # a newer build's is refused, not copied
        if stamped is not None and stamped != head_revision() and known and source is not None:
            kept = await asyncio.to_thread(backup.keep_before_upgrade, source, revision=stamped)
            print(f"backup of the database before the upgrade: {kept}")
        done = await upgrade(engine)
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


async def _digest(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_app
    from bot.service import send_once
    from bot.store import chats as chat_store
    from bot.store import outbox
    from bot.store.engine import reader
    from bot.util import settle_heap, utcnow

    async with open_app(settings) as app:
        settle_heap()
        chat_pks: list[int] | None = None
        if args.chat is not None:
            platform, chat_id = args.chat
            async with reader(app.engine).connect() as conn:
                record = await chat_store.get(conn, platform=platform, chat_id=chat_id)
            if record is None:
                print(f"no such chat: {platform.value}:{chat_id}", file=sys.stderr)
                return EXIT_FAILED
            chat_pks = [record.pk]
        async with app.engine.begin() as conn:
            retried = await outbox.retry_failed(conn, chat_pks=chat_pks)
        planned = await app.planner.plan_now(chat_pks=chat_pks)
        async with reader(app.engine).connect() as conn:
            row_ids = await outbox.due_ids(conn, now=utcnow(), chat_pks=chat_pks)
        await send_once(app, say=_say, row_ids=row_ids, chat_pks=chat_pks)
        async with reader(app.engine).connect() as conn:
            done = await outbox.standing(conn, row_ids=row_ids, now=utcnow())
            left, _ = await outbox.pending(conn, chat_pks=chat_pks)
    print(digest_summary(planned=planned, retried=retried, took=len(row_ids), done=done, left=left))
    return EXIT_OK


def digest_summary(*, planned: int, retried: int, took: int, done: Any, left: int) -> str:
    """What ``digest --now`` planned and what became of it, in numbers that add up.

    ``took``: the messages the command set out to send (those it planned and retried, and
    any others already due); ``done``: where they stand now (an ``outbox.Standing``);
    ``left``: every message still queued. Sent, failed, still being sent and left for
    retry make ``took``; messages queued for later that the command did not take are
    counted apart, never as its own.
    """
    earlier = max(0, took - planned - retried)
    parts = [f"{planned} planned", f"{retried} retried"]
    if earlier:
        parts.append(f"{earlier} already due")
    parts += [f"{done.sent} sent", f"{done.failed} failed"]
    if done.due:
        parts.append(f"{done.due} still being sent")
    parts.append(f"{done.later} left queued for retry")
    text = ", ".join(parts)
    others = max(0, left - done.due - done.later)
    if others:
        text += f" ({others} other messages queued for later)"
    return text


async def _broadcast(settings: Settings, args: argparse.Namespace) -> int:
    from bot.app import open_app
    from bot.commands.operator import MAX_BROADCAST_CHARS, skipped_text
    from bot.i18n import clean, t, tn
    from bot.service import send_once
    from bot.store import admin as admin_store
    from bot.store.admin import Audience
    from bot.store.engine import reader
    from bot.tags import normalize_tag
    from bot.util import settle_heap

    text = clean(args.text).strip()  # as in chat: no bidi controls or invisible characters
    if not text or len(text) > MAX_BROADCAST_CHARS:
        print(
            f"trendbot broadcast: --text must be 1-{MAX_BROADCAST_CHARS} characters",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    normalized = [normalize_tag(tag) for tag in args.tag]
    tags = tuple(tag for tag in normalized if tag is not None)
    if len(tags) != len(normalized):
        print("trendbot broadcast: --tag needs a tag such as rl", file=sys.stderr)
        return EXIT_CONFIG
    audience = Audience(tags=tags, platform=args.platform, lang=args.lang)
    async with open_app(settings) as app:
        settle_heap()
        async with reader(app.engine).connect() as conn:
            size = await admin_store.audience_size(conn, audience)
        skipped = skipped_text("en", size.skipped)
        if size.reach == 0:
            print(t("en", "cli.broadcast.no_audience", skipped=skipped), file=sys.stderr)
            return EXIT_FAILED
        print(tn("en", "cli.broadcast.reach", size.reach, skipped=skipped))
        if not args.yes:
            answer = await asyncio.to_thread(_ask, "Send it? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("Cancelled; nothing was sent.")
                return EXIT_FAILED
        async with app.engine.begin() as conn:
            broadcast_id, queued = await admin_store.broadcast_now(
                conn, text=text, audience=audience, created_by="shell"
            )
            await admin_store.audit(
                conn,
                actor="shell",
                chat=None,
                action="broadcast.confirmed",
                allowed=True,
                detail={"broadcast": broadcast_id, "queued": queued, "text": text},
            )
        await send_once(app, say=_say, broadcast=broadcast_id)
        async with reader(app.engine).connect() as conn:
            state = await admin_store.progress(conn, broadcast_id)
    print(
        f"Broadcast #{broadcast_id}: {queued} queued, {state.sent} sent, {state.failed} failed, "
        f"{state.pending} left queued for retry"
    )
    return EXIT_OK


def _say(line: str) -> None:
    print(line, flush=True)


def _ask(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        return ""


async def _audit(settings: Settings, args: argparse.Namespace) -> int:
    from bot.store import admin as admin_store
    from bot.store.engine import open_store, reader

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


async def _subscribers(settings: Settings, args: argparse.Namespace) -> int:
    from bot.store import chats as chat_store
    from bot.store.engine import open_store, reader

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


async def _stats(settings: Settings, args: argparse.Namespace) -> int:
    from bot.commands.operator import Admin
    from bot.store import admin as admin_store
    from bot.store.engine import open_store

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


async def _export(settings: Settings, args: argparse.Namespace) -> int:
    from bot.matching.transfer import export_record
    from bot.store import chats as chat_store
    from bot.store.engine import open_store, reader

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


async def _import(settings: Settings, args: argparse.Namespace) -> int:
    from bot.errors import TransferError
    from bot.matching.transfer import describe_error, parse_record
    from bot.store import chats as chat_store
    from bot.store.engine import open_store

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


async def _serve(
    settings: Settings, *, console: bool, http: bool, channels: bool, lock: bool
) -> int:
    from bot.app import open_app
    from bot.service import AlreadyRunning, Service, sqlite_run_lock
    from bot.store import reach
    from bot.util import settle_heap

    opened = False
    try:
        with sqlite_run_lock(settings.database_url) if lock else contextlib.nullcontext():
            async with open_app(settings) as app:
                opened = True
                settle_heap()
                return await Service(app, console=console, serve_http=http, channels=channels).run()
    except AlreadyRunning as exc:
        print(f"trendbot run: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except ConfigError as exc:
        print(f"configuration error: {exc.variable}: {exc.message}", file=sys.stderr)
        return EXIT_CONFIG
    except DeliveryError as exc:
        print(f"trendbot run: a chat platform could not be reached: {exc.reason}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:
        # A database that cannot be opened (unreachable, refused, missing): one line.
        line = None if opened else reach.failure(settings.database_url, exc)
        if line is None:
            raise
        print(f"trendbot {'run' if http else 'console'}: {line}", file=sys.stderr)
        return EXIT_FAILED


async def _run(settings: Settings, _args: argparse.Namespace) -> int:
    from bot.service import stdin_is_terminal

    no_chat_platform = not any(p.remote and p.enabled(settings) for p in _platforms().registered())
    return await _serve(
        settings,
        console=no_chat_platform and stdin_is_terminal(),
        http=True,
        channels=True,
        lock=True,
    )


async def _console(settings: Settings, _args: argparse.Namespace) -> int:
    return await _serve(settings, console=True, http=False, channels=False, lock=False)


HANDLERS: dict[str, Handler] = {
    "run": _run,
    "console": _console,
    "poll": _poll,
    "digest": _digest,
    "subscribers": _subscribers,
    "stats": _stats,
    "broadcast": _broadcast,
    "audit": _audit,
    "db": _db,
    "export": _export,
    "import": _import,
}


def _undecodable(argv: Sequence[str]) -> str | None:
    """The option whose value (or the argument) is not UTF-8 text, as the shell gave it.

    Python hands such bytes over as lone surrogates, which no database or chat accepts.
    """
    for index, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            previous = argv[index - 1] if index else ""
            if arg.startswith("--"):
                return arg.encode("utf-8", "replace").decode().split("=", 1)[0]
            return previous if previous.startswith("--") else f"argument {index + 1}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    bad = _undecodable(arguments)
    if bad is not None:
        print(f"trendbot: {bad}: must be valid UTF-8 text", file=sys.stderr)
        return EXIT_CONFIG
    args = _parser().parse_args(arguments)
    # python-telegram-bot 22 reports retry_after as a timedelta with this set (its future
    # default) and warns on every rate limit without it.
    os.environ.setdefault("PTB_TIMEDELTA", "true")
    from bot import logs
    from bot.channels.registry import settings_class
    from bot.settings import load_settings

    try:
        settings = load_settings(settings_class())
    except ConfigError as exc:
        print(f"configuration error: {exc.variable}: {exc.message}", file=sys.stderr)
        return EXIT_CONFIG
    except DeliveryError as exc:
        print(f"trendbot run: a chat platform could not be reached: {exc.reason}", file=sys.stderr)
        return EXIT_FAILED
    logs.configure(level=settings.log_level, fmt=settings.log_format, secrets=settings.secrets())
    try:
        return asyncio.run(HANDLERS[args.command](settings, args))
    except KeyboardInterrupt:
        return EXIT_OK
    except SchemaError as exc:  # one line, never a half-working command
        print(f"trendbot {args.command}: {exc.reason}", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as exc:
        from bot import dberrors

        if not dberrors.is_outage(exc):
            raise
        # Which database, and what failed ("database or disk is full"...): no traceback.
        line = dberrors.describe(exc, database_url=settings.database_url)
        print(f"trendbot {args.command}: {line}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
