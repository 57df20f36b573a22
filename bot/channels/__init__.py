"""The chat platforms: one package a platform (``telegram``, ``slack``, ``discord``,
``console``), each declaring its :class:`~bot.channels.platform.PlatformSpec`;
``platform`` (what a platform's package provides) and ``registry`` (the platforms the bot
runs) beside them.
"""

# Nothing is taken from the package itself: its modules are imported by name.
__all__: list[str] = []
