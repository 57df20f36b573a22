"""Slack opened for the service: the Web API client, its sender, the workspaces installed
by OAuth, and the channel (HTTP or Socket Mode) as configured."""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.channels.platform import Inbound, Opening, RequestHook, Route
from bot.channels.slack.channel import SlackChannel
from bot.channels.slack.client import make_client
from bot.channels.slack.install import StateStore
from bot.channels.slack.oauth import Workspaces
from bot.channels.slack.sender import SlackSender
from bot.channels.slack.settings import SlackSettings
from bot.commands import CommandCore
from bot.store.installations import TokenCipher


@dataclass(frozen=True, slots=True)
class SlackRoutes:
    """The spec's routes, given by it: this module never imports the spec."""

    events: Route
    install: Route
    redirect: Route


@dataclass(slots=True)
class SlackConnection:
    settings: SlackSettings
    client: AsyncWebClient
    sender: SlackSender
    routes: SlackRoutes
    workspaces: Workspaces | None = None  # installed by OAuth (SLACK_CLIENT_ID)
    states: StateStore | None = None

    def inbound(self, core: CommandCore) -> Inbound:
        """The channel on ``core``, answering the events where ``SLACK_SIGNING_SECRET`` is
        set and the installation where Slack is installed by OAuth."""
        channel = self.channel(core)
        routes: dict[Route, RequestHook] = {}
        if self.settings.slack_signing_secret is not None:
            routes[self.routes.events] = channel.handle_request
        if channel.oauth:
            routes[self.routes.install] = routes[self.routes.redirect] = channel.handle_install
        return Inbound(
            channel=channel,
            running=lambda: channel.running,
            routes=routes,
            auth_error=lambda: channel.auth.error,
            workspace_errors=None if self.workspaces is None else self.workspaces.unreadable,
        )

    def channel(self, core: CommandCore) -> SlackChannel:
        """The channel, sharing the sender's view of the token."""
        return SlackChannel(
            settings=self.settings,
            core=core,
            client=self.client,
            auth=self.sender.auth,
            workspaces=self.workspaces,
            state_store=self.states,
            pacing=self.sender.pacing,
        )

    async def close(self) -> None:
        return None


def connect(opening: Opening, *, routes: SlackRoutes) -> SlackConnection:
    settings = opening.settings
    assert isinstance(settings, SlackSettings)  # opened only where its section is read (enabled)
    client = make_client(settings)
    workspaces = states = None
    if settings.slack_oauth:
        workspaces, states = _oauth(settings, opening.engine, client)
    sender = SlackSender(
        client,
        per_channel_rate=settings.slack_rate_per_second,
        workspace_rate=settings.slack_workspace_rate_per_second,
        workspaces=workspaces,
    )
    return SlackConnection(
        settings=settings,
        client=client,
        sender=sender,
        routes=routes,
        workspaces=workspaces,
        states=states,
    )


def _oauth(
    settings: SlackSettings, engine: AsyncEngine, client: AsyncWebClient
) -> tuple[Workspaces, StateStore]:
    """The installed workspaces and the OAuth state store, on the project's database."""
    assert settings.slack_token_key and settings.slack_client_secret and settings.slack_state_secret
    assert settings.slack_client_id is not None
    workspaces = Workspaces(
        engine=engine,
        cipher=TokenCipher(settings.slack_token_key.get_secret_value()),
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret.get_secret_value(),
        client=client,
    )
    states = StateStore(engine=engine, secret=settings.slack_state_secret.get_secret_value())
    return workspaces, states
