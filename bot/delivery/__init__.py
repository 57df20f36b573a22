"""Delivery: the outbox worker (``engine``), the platforms' pace (``pacing``) and the
failure policy (``failures``: an error x its attempts -> retry, give up, or stop the chat),
and the port each platform implements (``sender``).
"""
