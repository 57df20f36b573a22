"""Replies of the chat commands."""

MESSAGES: dict[str, dict[str, str]] = {"en": {}, "ko": {}}
