"""The ``trendbot`` command line; the only place settings are read from the environment.

It parses the arguments, reads the settings and runs the command they name; the parser and
the commands are in :mod:`bot.cli`, grouped by what they do.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence

from bot.cli import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_OK,
    Handler,
    cannot_start,
    database,
    reports,
    send,
    serve,
)
from bot.cli.parser import build_parser, undecodable
from bot.errors import BotError, ConfigError, DeliveryError, SchemaError

HANDLERS: dict[str, Handler] = {
    "run": serve.run,
    "console": serve.console,
    "poll": send.poll,
    "digest": send.digest,
    "subscribers": reports.subscribers,
    "stats": reports.stats,
    "broadcast": send.broadcast,
    "audit": reports.audit,
    "db": database.db,
    "export": database.export,
    "import": database.import_,
}


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    bad = undecodable(arguments)
    if bad is not None:
        print(f"trendbot: {bad}: must be valid UTF-8 text", file=sys.stderr)
        return EXIT_CONFIG
    args = build_parser().parse_args(arguments)
    # python-telegram-bot 22 reports retry_after as a timedelta with this set (its future
    # default) and warns on every rate limit without it.
    os.environ.setdefault("PTB_TIMEDELTA", "true")
    from bot import logs
    from bot.channels.registry import settings_class
    from bot.settings import load_settings

    try:
        settings = load_settings(settings_class())
    except (ConfigError, DeliveryError) as exc:
        return cannot_start(exc)
    logs.configure(level=settings.log_level, fmt=settings.log_format, secrets=settings.secrets())
    try:
        return asyncio.run(HANDLERS[args.command](settings, args))
    except KeyboardInterrupt:
        return EXIT_OK
    except BrokenPipeError:
        # Whoever read the output stopped reading (`trendbot stats --json | head`): nothing
        # of the bot's failed. Later writes (the flush at exit) go nowhere, and nothing is said.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except SchemaError as exc:  # one line, never a half-working command
        print(f"trendbot {args.command}: {exc.reason}", file=sys.stderr)
        return EXIT_CONFIG
    except BotError as exc:  # raised on purpose, with its own words: one line, no traceback
        print(f"trendbot {args.command}: {exc}", file=sys.stderr)
        return EXIT_FAILED
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
