"""A link button (the settings page's) as each platform renders it: Telegram's
InlineKeyboardButton with ``url`` or ``web_app``, Slack's button element with ``url``."""

from __future__ import annotations

import json
from typing import Any

import bot.channels.registry  # noqa: F401  (the platforms' renderers)
from bot import render
from bot.channels.discord.payload import payload as discord_payload
from bot.channels.discord.settings import DISCORD
from bot.channels.slack.blocks import LINK_ACTION_ID
from bot.channels.slack.payload import payload as slack_payload
from bot.channels.telegram.payload import payload as telegram_payload
from bot.models import Button, Platform, Reply

URL = "https://bot.example.com/settings/open/abc"
APP = "https://bot.example.com/settings/app"


def reply(button: Button) -> Reply:
    return Reply("en", "Settings", buttons=((button,),))


def telegram_buttons(r: Reply) -> list[dict[str, Any]]:
    [message] = render.reply_messages(Platform.TELEGRAM, r)
    markup = telegram_payload(message).markup
    assert markup is not None
    return [b for row in markup["inline_keyboard"] for b in row]


def slack_elements(r: Reply) -> list[dict[str, Any]]:
    [message] = render.reply_messages(Platform.SLACK, r)
    blocks = json.loads(json.dumps(slack_payload(message).blocks))
    return [e for block in blocks if block["type"] == "actions" for e in block["elements"]]


def test_telegram_a_link_or_a_mini_app() -> None:
    assert telegram_buttons(reply(Button("Open", url=URL))) == [{"text": "Open", "url": URL}]
    assert telegram_buttons(reply(Button("Open", url=URL, app=APP))) == [
        {"text": "Open", "web_app": {"url": APP}}
    ]
    assert telegram_buttons(reply(Button("Yes", "act:1"))) == [
        {"text": "Yes", "callback_data": "act:1"}
    ]


def test_slack_a_link_button_opens_its_url() -> None:
    [element] = slack_elements(reply(Button("Open", url=URL, app=APP)))
    assert element["url"] == URL and element["action_id"] == LINK_ACTION_ID
    assert "value" not in element
    [plain] = slack_elements(reply(Button("Yes", "act:1")))
    assert plain["value"] == "act:1" and "url" not in plain


def test_discord_a_link_button_has_a_url_and_no_custom_id() -> None:
    [message] = render.reply_messages(DISCORD, reply(Button("Open", url=URL, app=APP)))
    found = json.dumps(discord_payload(message).components)
    assert '"style": 5' in found and f'"url": "{URL}"' in found and "custom_id" not in found
