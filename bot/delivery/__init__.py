"""Delivery: the outbox worker (``engine``: its workers and sends; ``claims``: the claim
loop; ``recording``: the records of sends, group-committed; ``retries``: what a failed send
calls for; ``rendering`` and ``queues``: the messages and the chats' queues in memory), the
platforms' pace (``pacing``), the failure policy (``failures``: an error x its attempts ->
retry, give up, or stop the chat), and the port each platform implements (``sender``).
"""
