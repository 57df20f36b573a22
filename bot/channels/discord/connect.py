"""Discord opened for the service: the REST client, its sender, and the interactions
endpoint."""

from __future__ import annotations

from dataclasses import dataclass

from bot.channels.discord.interactions import DiscordChannel
from bot.channels.discord.rest import RestClient
from bot.channels.discord.sender import DiscordSender
from bot.channels.discord.spec import INSTALL, INTERACTIONS, DiscordSettings
from bot.channels.platform import Inbound, Opening
from bot.commands import CommandCore


@dataclass(slots=True)
class DiscordConnection:
    settings: DiscordSettings
    rest: RestClient
    sender: DiscordSender

    def inbound(self, core: CommandCore) -> Inbound:
        """The interactions endpoint on ``core``, and the install link."""
        channel = self.channel(core)
        return Inbound(
            channel=channel,
            running=lambda: channel.running,
            routes={INTERACTIONS: channel.handle_request, INSTALL: channel.handle_install},
            auth_error=lambda: self.rest.auth_error,
        )

    def channel(self, core: CommandCore) -> DiscordChannel:
        return DiscordChannel(settings=self.settings, core=core, rest=self.rest)

    async def close(self) -> None:
        await self.rest.close()


def connect(opening: Opening) -> DiscordConnection:
    settings = opening.settings
    assert isinstance(settings, DiscordSettings) and settings.discord_bot_token is not None
    rest = RestClient(
        base_url=settings.discord_api_base_url,
        token=settings.discord_bot_token.get_secret_value(),
    )
    return DiscordConnection(settings=settings, rest=rest, sender=DiscordSender(rest))
