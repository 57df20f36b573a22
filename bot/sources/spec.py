"""A source's entry is parsed by :mod:`bot.rules.sources`; this name stays only for
``bot/settings.py``'s import until the settings' split by platform lands beside it."""

from bot.rules.sources import parse_source as parse_source
from bot.rules.sources import parse_sources as parse_sources
from bot.rules.sources import public_identity as public_identity
