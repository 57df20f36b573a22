"""AI Trend Notifier: TL;DR digests of new AI research wiki pages, for Telegram and Slack."""

from __future__ import annotations

import functools

__all__ = ["DISTRIBUTION", "__version__", "version"]

DISTRIBUTION = "ai-trend-notifier"


@functools.cache
def version() -> str:
    """The installed version, from the package's metadata: ``pyproject.toml`` is its one
    source. A checkout that was never installed says ``0+unknown``."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> str:
    # ``bot.__version__`` is read when asked for: importing the metadata costs every
    # command a few milliseconds that only ``--version`` and the HTTP clients need.
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
