"""The chat platforms the bot runs: one line names each platform's package.

Loading a package registers its rules (:mod:`bot.platforms`) and its renderer
(:mod:`bot.render`); its ``PLATFORM`` says how to open it (:mod:`bot.channels.platform`).
A new platform is its package under ``bot/channels/`` and its name in ``PACKAGES``.
"""

from __future__ import annotations

import importlib

from bot.channels.platform import PlatformSpec, Route

PACKAGES = ("telegram", "slack", "console")


def _load(name: str) -> PlatformSpec:
    spec = importlib.import_module(f"bot.channels.{name}").PLATFORM
    if not isinstance(spec, PlatformSpec):
        raise TypeError(f"bot.channels.{name}.PLATFORM is not a PlatformSpec")
    return spec


PLATFORMS: tuple[PlatformSpec, ...] = tuple(_load(name) for name in PACKAGES)


def routes() -> tuple[Route, ...]:
    """Every platform's web routes."""
    return tuple(route for spec in PLATFORMS for route in spec.routes)
