"""The schedule's rules live in :mod:`bot.rules.schedule`; this name stays only for
``bot/settings.py``'s import until the settings' split by platform lands beside it."""

from bot.rules.schedule import check_zone as check_zone
