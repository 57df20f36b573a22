"""The ``trendbot`` command line behind :mod:`bot.__main__`, which reads the settings and
runs the command the arguments name: the parser, and the commands by what they do, each an
``async`` function of the settings and the parsed arguments that returns the exit code.

- :mod:`bot.cli.parser`: every command, option and help text, and the checks of the values;
- :mod:`bot.cli.serve`: ``run`` and ``console``, the service;
- :mod:`bot.cli.send`: the one-shot commands that queue and send: ``poll``, ``digest``,
  ``broadcast``;
- :mod:`bot.cli.database`: the store's administration: ``db upgrade``, ``db backup``,
  ``export``, ``import``;
- :mod:`bot.cli.reports`: what an operator reads: ``subscribers``, ``stats``, ``audit``.

Each command imports what it needs when it runs, so `trendbot --help` and the one-shot
reports load no chat library, migration tool or metrics client they do not use: at their
top these modules import the standard library, :mod:`bot.errors` and :mod:`bot.models` only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from bot.errors import ConfigError, DeliveryError

if TYPE_CHECKING:
    from bot.settings import Settings

__all__ = ["EXIT_CONFIG", "EXIT_FAILED", "EXIT_OK", "Handler", "cannot_start"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2

Handler = Callable[["Settings", argparse.Namespace], Coroutine[Any, Any, int]]


def cannot_start(exc: ConfigError | DeliveryError) -> int:
    """A setting a command cannot start with, or a chat platform it cannot reach at start:
    one line naming it, no traceback, and the exit code."""
    if isinstance(exc, ConfigError):
        print(f"configuration error: {exc.variable}: {exc.message}", file=sys.stderr)
        return EXIT_CONFIG
    print(f"trendbot run: a chat platform could not be reached: {exc.reason}", file=sys.stderr)
    return EXIT_FAILED
