"""Slack as a platform (:mod:`bot.channels.platform`): its variables, its rules, and how
to open it.

Its variables are a section of their own (:class:`.settings.SlackSettings`).

slack-sdk and Bolt load only where Slack is configured (:mod:`.connect`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot import platforms
from bot.channels.platform import Opening, PlatformSpec, Route
from bot.channels.slack.settings import (
    DEFAULT_COMMAND,
    SLACK_ADMIN_RE,
    SlackSettings,
    enabled,
    slack_settings,
)
from bot.models import Platform
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.channels.slack.connect import SlackConnection

SLACK = Platform.SLACK
# The Events API, interactivity and the slash command, in HTTP mode (SLACK_SIGNING_SECRET).
EVENTS = Route("POST", "/slack/events")
# Installation by OAuth (SLACK_CLIENT_ID): the "Add to Slack" page and Slack's redirect.
INSTALL = Route("GET", "/slack/install")
REDIRECT = Route("GET", "/slack/oauth_redirect")
TOKEN_IN_TEXT = re.compile(r"\bxox[abepr]-[A-Za-z0-9-]+|\bxapp-[A-Za-z0-9-]+")
# A Slack OAuth code (digits.digits.hex, in the redirect's query and oauth.v2.access's body).
OAUTH_CODE_IN_TEXT = re.compile(r"\b\d{4,}\.\d{4,}\.[0-9a-f]{16,}\b")


def _admin_ids(settings: Settings) -> tuple[str, ...]:
    found = slack_settings(settings)
    return () if found is None else found.slack_admin_ids


def _prefix(settings: Settings) -> str:
    found = slack_settings(settings)
    return f"{DEFAULT_COMMAND if found is None else found.slack_command} "


def _admins(settings: Settings) -> platforms.AdminCheck:
    """``SLACK_ADMIN_IDS``: ``TEAM:USER`` entries, or a bare user id with one workspace."""
    found = slack_settings(settings)
    pairs = set(() if found is None else found.slack_admins)

    def check(user: str, workspace: str | None) -> str | None:
        if workspace and (workspace, user) in pairs:
            return f"{workspace}:{user}"
        if (None, user) in pairs:
            return user
        return None

    return check


def _admin_chat(settings: Settings, entry: str) -> platforms.AdminChat | None:
    # chat.postMessage to a user's id posts in their DM with the app (its Messages tab,
    # https://api.slack.com/methods/chat.postMessage#app_home), as for the DM
    # subscriptions of bot/channels/slack/: no conversation to open, no im:write.
    # Installed by OAuth, a chat's id names its workspace, whose token sends to it.
    match = SLACK_ADMIN_RE.match(entry)
    if match is None:
        return None
    team, user_id = match[1], match[2]
    found = slack_settings(settings)
    channel = f"{team}/{user_id}" if found is not None and found.slack_oauth else user_id
    return platforms.AdminChat(chat_id=channel, opened=True)


def _connect(opening: Opening) -> SlackConnection:
    from bot.channels.slack.connect import SlackRoutes, connect

    return connect(opening, routes=SlackRoutes(events=EVENTS, install=INSTALL, redirect=REDIRECT))


RULES = platforms.PlatformRules(
    name=SLACK,
    enabled=enabled,
    admin_ids=_admin_ids,
    admins=_admins,
    admin_chat=_admin_chat,
    workspace_admins=True,
    prefix=_prefix,
    private_replies=True,  # every answer to a command or a press is ephemeral
    redact=(OAUTH_CODE_IN_TEXT, TOKEN_IN_TEXT),
    loggers=("slack_bolt",),
)
PLATFORM = PlatformSpec(
    rules=RULES, connect=_connect, routes=(EVENTS, INSTALL, REDIRECT), settings=SlackSettings
)

platforms.register(RULES)
