"""What a platform package gives the running bot: :class:`PlatformSpec`.

A platform is one package of :mod:`bot.channels` and one line of
:mod:`bot.channels.registry`. The package declares, in its ``__init__``:

- its :class:`~bot.platforms.PlatformRules` (name, whether the settings enable it, its
  admins, what the logs redact), registered with :mod:`bot.platforms` as it loads;
- its renderer, registered with :mod:`bot.render` as it loads;
- ``PLATFORM``, a :class:`PlatformSpec`: how to open it (its client, its sender for the
  delivery engine, its inbound channel), the web routes it serves, and its own variables.

The composition (:mod:`bot.app`, :mod:`bot.service`, :mod:`bot.ops.web`) loops over the
registered specs and names no platform.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TextIO

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.platforms import PlatformRules
from bot.settings import Settings

# Types alone: a one-shot command loads the registry, not the delivery's metrics.
if TYPE_CHECKING:
    from aiohttp import web

    from bot.commands import CommandCore
    from bot.delivery.sender import Sender

# A hook that answers an HTTP request itself.
RequestHook = Callable[["web.Request"], Awaitable["web.StreamResponse"]]


@dataclass(frozen=True, slots=True)
class Route:
    """A path of the bot's HTTP server a platform answers on (``POST /slack/events``)."""

    method: str
    path: str


class Channel(Protocol):
    """A platform's inbound side, started and stopped with the service."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class PollingChannel(Channel, Protocol):
    """A channel that long-polls its platform: only the leader replica polls."""

    @property
    def polling(self) -> bool: ...

    async def start(self, *, poll: bool = True) -> None: ...

    async def start_polling(self) -> None: ...

    async def stop_polling(self) -> None: ...


@dataclass(slots=True)
class Inbound:
    """A platform's channel as the service runs it.

    ``polling`` is the channel again where it long-polls (the leader polls). ``routes``
    are the hooks of its web routes it answers (the others answer 404). ``running`` says
    whether it is connected, ``auth_error`` what its credentials' error is (None while they
    work), ``workspace_errors`` which of its workspaces cannot be reached, each with why:
    ``/healthz`` reports them under the platform's name.
    """

    channel: Channel
    running: Callable[[], bool]
    polling: PollingChannel | None = None
    routes: dict[Route, RequestHook] = field(default_factory=dict)
    auth_error: Callable[[], str | None] | None = None
    workspace_errors: Callable[[], Mapping[str, str]] | None = None


class Connection(Protocol):
    """A configured platform, opened for one :class:`bot.app.App`: its client and its
    sender (the delivery engine's), and its inbound channel on the command core."""

    @property
    def sender(self) -> Sender: ...

    def inbound(self, core: CommandCore) -> Inbound | None:
        """The channel the service runs, None where the platform has none."""
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Opening:
    """What opening a platform may use: the settings, the database (for what the platform
    keeps there, such as Slack's installations), and the console's output."""

    settings: Settings
    engine: AsyncEngine
    console_out: TextIO | None = None


@dataclass(frozen=True, slots=True)
class PlatformSpec:
    """A platform, as its package declares it (see the module's docstring).

    Attributes:
        rules: what the settings say of it (:class:`~bot.platforms.PlatformRules`).
        connect: opens it where ``rules.enabled`` (its libraries load only then).
        routes: the web routes it may answer, all served; 404 while its hook is unset.
        settings: its own variables (:class:`~bot.settings.Settings` names no platform):
            a subclass of it declaring only those (named as CONTRACT.md names them), with
            their checks, read from the environment with the rest (:func:`bot.channels.
            registry.settings_class`); its code finds them with ``isinstance(settings,
            ...)``. None for a platform without variables (the console).
    """

    rules: PlatformRules
    connect: Callable[[Opening], Connection]
    routes: tuple[Route, ...] = ()
    settings: type[Settings] | None = None


__all__ = [
    "Channel",
    "Connection",
    "Inbound",
    "Opening",
    "PlatformSpec",
    "PollingChannel",
    "RequestHook",
    "Route",
]
