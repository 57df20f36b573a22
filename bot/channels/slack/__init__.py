"""Slack: Block Kit messages, and the channel that sends and receives them.

``blocks`` renders digests and replies within Block Kit's limits; loading this package
registers it with :mod:`bot.render`. The channel itself (slack-sdk and Bolt) is in the
modules beside it, loaded only where Slack is configured: ``channel`` (events, commands
and actions -> the command core), ``sender`` (messages -> the Web API, for the delivery
engine), ``oauth`` (installation in many workspaces).
"""

from __future__ import annotations

from dataclasses import replace

from bot import render
from bot.channels.slack import blocks as slack
from bot.channels.slack.payload import SlackPayload, payload
from bot.channels.slack.spec import PLATFORM as PLATFORM
from bot.models import Button, Digest, Outgoing, Reply
from bot.render import text
from bot.render.toggle import ACTION_ID

__all__ = ["PLATFORM"]  # what bot.channels.registry loads


def _digest(digest: Digest) -> list[Outgoing]:
    # Each page a collapsible container; today's sections where a workspace refuses it.
    summary, replies = slack.render_digest_containers(digest)
    return [
        Outgoing(
            text=m.text,
            payload=SlackPayload(blocks=m.blocks, fallback_blocks=m.fallback_blocks),
            in_thread=t,
        )
        for m, t in [(summary, False), *((r, True) for r in replies)]
    ]


def _reply(reply: Reply) -> list[Outgoing]:
    message = slack.render_reply(reply)
    return [Outgoing(text=message.text, payload=SlackPayload(blocks=message.blocks))]


def _text(body: str) -> list[Outgoing]:
    pieces = text.split_text(body, slack.MAX_SECTION_TEXT, cost=slack.escaped_cost)
    return [Outgoing(text=slack.escape(piece), plain=True) for piece in pieces]


def _toggle(out: list[Outgoing], toggle: Button) -> list[Outgoing]:
    first = payload(out[0])
    out[0] = replace(
        out[0],
        payload=SlackPayload(
            blocks=_slack_with(first.blocks, toggle),
            fallback_blocks=_slack_with(first.fallback_blocks, toggle),
        ),
    )
    return out


def _slack_with(
    blocks: tuple[dict[str, object], ...], toggle: Button
) -> tuple[dict[str, object], ...]:
    if not blocks or len(blocks) >= slack.MAX_BLOCKS:
        return blocks
    element = {
        "type": "button",
        "action_id": ACTION_ID,
        "text": {"type": "plain_text", "text": toggle.label[: slack.MAX_BUTTON_TEXT]},
        "value": toggle.action,
    }
    return (*blocks, {"type": "actions", "elements": [element]})


render.register(
    PLATFORM.rules.name,
    render.PlatformRenderer(digest=_digest, reply=_reply, text=_text, toggle=_toggle),
)
