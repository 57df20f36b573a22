"""Discord opened for the service: the REST client, its sender, and the interactions
endpoint."""

from __future__ import annotations

from dataclasses import dataclass

from bot.channels.discord.interactions import DiscordChannel
from bot.channels.discord.rest import RestClient
from bot.channels.discord.sender import DiscordSender
from bot.channels.discord.settings import DiscordSettings
from bot.channels.platform import Inbound, Opening, Route
from bot.commands import CommandCore


@dataclass(slots=True)
class DiscordConnection:
    settings: DiscordSettings
    rest: RestClient
    sender: DiscordSender
    # The spec's routes, given by it: this module never imports the spec.
    interactions: Route
    install: Route

    def inbound(self, core: CommandCore) -> Inbound:
        """The interactions endpoint on ``core``, and the install link."""
        channel = self.channel(core)
        return Inbound(
            channel=channel,
            running=lambda: channel.running,
            routes={
                self.interactions: channel.handle_request,
                self.install: channel.handle_install,
            },
            auth_error=lambda: self.rest.auth_error,
        )

    def channel(self, core: CommandCore) -> DiscordChannel:
        return DiscordChannel(settings=self.settings, core=core, rest=self.rest)

    async def close(self) -> None:
        await self.rest.close()


def connect(opening: Opening, *, interactions: Route, install: Route) -> DiscordConnection:
    """The REST client and the sender of ``opening``'s settings; the channel on the spec's
    ``interactions`` and ``install`` routes."""
    settings = opening.settings
    assert isinstance(settings, DiscordSettings) and settings.discord_bot_token is not None
    rest = RestClient(
        base_url=settings.discord_api_base_url,
        token=settings.discord_bot_token.get_secret_value(),
    )
    return DiscordConnection(
        settings=settings,
        rest=rest,
        sender=DiscordSender(rest),
        interactions=interactions,
        install=install,
    )
