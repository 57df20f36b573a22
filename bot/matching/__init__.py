"""Matching: which pages each chat gets, and when, over the store and the rules of
:mod:`bot.rules`. ``offers`` (which pages each chat planned gets), ``planner`` (the chats due
-> outbox rows), ``why`` (why a page was or was not sent), ``transfer`` (a chat's settings as a
file).
"""

# Nothing is taken from the package itself: its modules are imported by name.
__all__: list[str] = []
