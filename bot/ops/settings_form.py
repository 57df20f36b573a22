"""The settings page's form: the values it shows for a chat, and what a posted form asks
for, read the way the settings line (``import``) reads them."""

from __future__ import annotations

import zoneinfo
from typing import Any
from urllib.parse import parse_qsl

from bot.commands import settings_page as page
from bot.matching import transfer
from bot.models import ChatState
from bot.rules import filters, schedule
from bot.rules.schedule import zone_label
from bot.tags import normalize_tag

__all__ = ["TAG_CHOICES", "form_of", "place_zones", "values_from", "values_of"]

TAG_CHOICES = ("off", "any", "required", "excluded")


def form_of(body: bytes) -> dict[str, str]:
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        return {}
    return dict(pairs)


def values_of(view: page.PageView) -> dict[str, Any]:
    """The form's values for the chat as stored."""
    chat = view.record.chat
    tags = {tag: "any" for tag in sorted(chat.filter.any_of)}
    tags |= {tag: "required" for tag in sorted(chat.filter.required)}
    tags |= {tag: "excluded" for tag in sorted(chat.filter.excluded)}
    return {
        "tags": tags,
        "every": chat.filter.everything,
        "filter": filters.format_filter(chat.filter),
        "mode": chat.mode.value,
        "day": transfer.WEEKDAYS[chat.weekday],
        "time": chat.digest_time.strftime("%H:%M"),
        "tz": zone_label(chat.timezone),
        "lang": chat.lang,
        "quiet": str(chat.quiet) if chat.quiet else "",
        "limit": str(chat.limit) if chat.limit else "",
        "paused": chat.state == ChatState.PAUSED,
    }


def values_from(form: dict[str, str]) -> dict[str, Any]:
    """The form's values as posted: each tag's choice (``tag:NAME`` = off, any, required or
    excluded), ``every`` for ``*``, and the rest by the settings line's names."""
    chosen = {
        name.removeprefix("tag:"): choice
        for name, choice in form.items()
        if name.startswith("tag:") and choice in TAG_CHOICES and choice != "off"
    }
    # A tag's name goes into the filter as one word: anything that is not one tag (a
    # space, a sign, a star) is named back rather than read as several.
    tags = {tag: choice for tag, choice in chosen.items() if normalize_tag(tag) == tag}
    sign = {"any": "", "required": "+", "excluded": "-"}
    every = form.get("every") == "on"
    words = (["*"] if every else []) + [f"{sign[c]}{tag}" for tag, c in tags.items()]
    return {
        "tags": tags,
        "bad_tags": [tag for tag in chosen if tag not in tags],
        "every": every,
        "filter": " ".join(words),
        "mode": form.get("mode", ""),
        "day": form.get("day", ""),
        "time": form.get("time", ""),
        "tz": form.get("tz", ""),
        "lang": form.get("lang", ""),
        "quiet": form.get("quiet", ""),
        "limit": form.get("limit", ""),
        "paused": form.get("paused") == "on",
    }


def place_zones() -> list[str]:
    return sorted(z for z in zoneinfo.available_timezones() if schedule.is_place_zone(z))
