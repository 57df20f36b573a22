"""The chat platforms the bot runs: one line names each platform's package.

Loading a package registers its rules (:mod:`bot.platforms`) and its renderer
(:mod:`bot.render`); its ``PLATFORM`` says how to open it (:mod:`bot.channels.platform`).
A new platform is its package under ``bot/channels/`` and its name in ``PACKAGES``.
"""

from __future__ import annotations

import functools
import importlib

from pydantic import create_model

from bot.channels.platform import PlatformSpec, Route
from bot.settings import Settings

PACKAGES = ("telegram", "slack", "discord", "console")


def _load(name: str) -> PlatformSpec:
    spec = importlib.import_module(f"bot.channels.{name}").PLATFORM
    if not isinstance(spec, PlatformSpec):
        raise TypeError(f"bot.channels.{name}.PLATFORM is not a PlatformSpec")
    return spec


PLATFORMS: tuple[PlatformSpec, ...] = tuple(_load(name) for name in PACKAGES)


def routes() -> tuple[Route, ...]:
    """Every platform's web routes."""
    return tuple(route for spec in PLATFORMS for route in spec.routes)


@functools.cache
def settings_class() -> type[Settings]:
    """:class:`~bot.settings.Settings` with every platform's own variables
    (:attr:`PlatformSpec.settings`): the class the CLI reads the environment into."""
    sections = tuple(spec.settings for spec in PLATFORMS if spec.settings is not None)
    if not sections:
        return Settings
    # Reversed: pydantic lists the fields of the last base first, so each section's
    # variables follow the core's in the order of PACKAGES.
    return create_model("Settings", __base__=sections[::-1], __module__=__name__)


__all__ = [
    "PACKAGES",
    "PLATFORMS",
    "routes",
    "settings_class",
]
