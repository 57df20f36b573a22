"""``trendbot``'s arguments: every command, option and help text, and the checks of their
values. An argument error is one line and exit 2; nothing here reads the environment."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any, NoReturn

from bot.cli import EXIT_CONFIG, EXIT_OK
from bot.models import LANGUAGES, Platform

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
    "subscribers": (
        "One line per chat: state (and, for a chat that is not active, reason=why), mode, "
        "digest time, zone, language and filter."
    ),
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


def build_parser() -> argparse.ArgumentParser:
    """``trendbot``'s parser: every command, its options and its help."""
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
    from bot.rules.filters import parse_items

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
        return iter(registered_platforms().broadcast_names())

    def __contains__(self, value: object) -> bool:
        return value in registered_platforms().broadcast_names()


def registered_platforms() -> ModuleType:
    """:mod:`bot.platforms`, with every platform package of the registry registered."""
    import bot.channels.registry  # noqa: F401
    from bot import platforms

    return platforms


def _chat_address(value: str) -> tuple[Platform, str]:
    registered_platforms()
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


def undecodable(argv: Sequence[str]) -> str | None:
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
