"""The ``trendbot`` command line; the only place settings are read from the environment."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from bot import __version__, logs
from bot.app import open_app
from bot.errors import ConfigError
from bot.settings import Settings, load_settings

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trendbot", description="TL;DR digests of new AI research wiki pages."
    )
    parser.add_argument("--version", action="version", version=f"trendbot {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    poll = commands.add_parser("poll", help="scan every source once and queue notifications")
    poll.add_argument(
        "--backfill",
        type=_non_negative_int,
        metavar="DAYS",
        help="also notify about pages dated within the last DAYS days",
    )

    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    db_commands.add_parser("upgrade", help="apply schema migrations")
    return parser


def _non_negative_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of days") from None
    if number < 0:
        raise argparse.ArgumentTypeError("must be 0 or more days")
    return number


async def _poll(settings: Settings, args: argparse.Namespace) -> int:
    async with open_app(settings) as app:
        summary = await app.poller.poll(backfill_days=args.backfill)
    for outcome in summary.outcomes:
        if outcome.error:
            print(f"source failed: {outcome.name}: {outcome.error}", file=sys.stderr)
    print(summary.line(), flush=True)
    return EXIT_FAILED if summary.all_failed else EXIT_OK


async def _db_upgrade(settings: Settings, _args: argparse.Namespace) -> int:
    async with open_app(settings):
        pass
    print("database is up to date")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"configuration error: {exc.variable}: {exc.message}", file=sys.stderr)
        return EXIT_CONFIG
    logs.configure(
        level=settings.log_level, fmt=settings.log_format, secrets=settings.secrets()
    )
    handlers = {"poll": _poll, "db": _db_upgrade}
    try:
        return asyncio.run(handlers[args.command](settings, args))
    except KeyboardInterrupt:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
