"""``trendbot run`` and ``trendbot console``: the service, with or without its HTTP server
and chat channels."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

from bot.cli import EXIT_FAILED, cannot_start
from bot.cli.parser import registered_platforms
from bot.errors import ConfigError, DeliveryError

if TYPE_CHECKING:
    from bot.settings import Settings


async def _serve(
    settings: Settings, *, console: bool, http: bool, channels: bool, lock: bool
) -> int:
    from bot.app import open_app
    from bot.service import AlreadyRunning, CannotLock, Service, sqlite_run_lock
    from bot.store import reach
    from bot.util import settle_heap

    opened = False
    try:
        with sqlite_run_lock(settings.database_url) if lock else contextlib.nullcontext():
            async with open_app(settings) as app:
                opened = True
                settle_heap()
                return await Service(app, console=console, serve_http=http, channels=channels).run()
    except (AlreadyRunning, CannotLock) as exc:
        print(f"trendbot run: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except (ConfigError, DeliveryError) as exc:
        return cannot_start(exc)
    except Exception as exc:
        # A database that cannot be opened (unreachable, refused, missing): one line.
        line = None if opened else reach.failure(settings.database_url, exc)
        if line is None:
            raise
        print(f"trendbot {'run' if http else 'console'}: {line}", file=sys.stderr)
        return EXIT_FAILED


async def run(settings: Settings, _args: argparse.Namespace) -> int:
    from bot.service import stdin_is_terminal

    platforms = registered_platforms().registered()
    no_chat_platform = not any(p.remote and p.enabled(settings) for p in platforms)
    return await _serve(
        settings,
        console=no_chat_platform and stdin_is_terminal(),
        http=True,
        channels=True,
        lock=True,
    )


async def console(settings: Settings, _args: argparse.Namespace) -> int:
    return await _serve(settings, console=True, http=False, channels=False, lock=False)
