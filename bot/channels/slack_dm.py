"""Slack direct messages with a user, for operator alerts (``conversations.open``)."""

from __future__ import annotations

import logging

import aiohttp
from slack_sdk.errors import SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.channels.slack import translate_error

log = logging.getLogger("bot.channels.slack")


class SlackDirectMessages:
    """Satisfies ``bot.alert_service.DirectMessages``."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client

    async def open(self, user_id: str) -> str | None:
        """The id of the app's DM with ``user_id`` (``D…``), opened if need be.

        conversations.open with ``users`` of one user answers the existing DM or a new one
        (https://api.slack.com/methods/conversations.open); it needs the ``im:write`` scope.
        """
        try:
            response = await self._client.conversations_open(users=user_id)
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("cannot open a DM with an admin: %s", translate_error(exc).reason)
            return None
        channel = response.get("channel") or {}
        channel_id = channel.get("id") if isinstance(channel, dict) else None
        return str(channel_id) if channel_id else None
