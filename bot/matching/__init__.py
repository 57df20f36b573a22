"""Matching (pure, but for the planner's queries): which pages each chat gets, and when.

``filters`` (the filter syntax; a filter x a page -> bool), ``digest`` (pages x a chat -> a
digest), ``ranking`` (votes -> tag weights), ``schedule`` (a chat's next digest), ``offers``
(which pages each chat planned gets), ``planner`` (the chats due -> outbox rows), ``why``
(why a page was or was not sent), ``transfer`` (a chat's settings as a file).
"""
