"""Prometheus metrics. One registry per process, served on ``GET /metrics``."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

MESSAGES_SENT = Counter(
    "trendbot_messages_sent_total",
    "Platform messages sent",
    ["platform", "kind"],
    registry=REGISTRY,
)
MESSAGES_FAILED = Counter(
    "trendbot_messages_failed_total",
    "Deliveries that failed for good",
    ["platform", "reason"],
    registry=REGISTRY,
)
MESSAGES_RETRIED = Counter(
    "trendbot_messages_retried_total",
    "Sends that will be retried",
    ["platform", "reason"],
    registry=REGISTRY,
)
REPLIES = Counter(
    "trendbot_replies_total",
    "Replies to chat commands by outcome: sent, retried (a try to be made again), failed",
    ["platform", "outcome"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge("trendbot_queue_depth", "Messages queued or being sent", registry=REGISTRY)
QUEUE_OLDEST_AGE = Gauge(
    "trendbot_queue_oldest_age_seconds", "Age of the oldest queued message", registry=REGISTRY
)
POLL_DURATION = Histogram(
    "trendbot_poll_duration_seconds", "Time to scan one source", ["source"], registry=REGISTRY
)
POLL_ERRORS = Counter(
    "trendbot_poll_errors_total", "Sources that failed a poll", ["source"], registry=REGISTRY
)
COMMANDS = Counter(
    "trendbot_commands_total",
    "Chat commands handled",
    ["platform", "command"],
    registry=REGISTRY,
)
COMMAND_LATENCY = Histogram(
    "trendbot_command_latency_seconds",
    "Time to answer a chat command",
    ["command"],
    registry=REGISTRY,
)
LANGUAGE_TOGGLES = Counter(
    "trendbot_language_toggles_total",
    "Presses of a digest's language toggle, by the language asked for",
    ["platform", "lang"],
    registry=REGISTRY,
)
DIGEST_BUILD = Histogram(
    "trendbot_digest_build_seconds", "Time to plan due digests", registry=REGISTRY
)
PLATFORM_AUTH_FAILURES = Counter(
    "trendbot_platform_auth_failures_total",
    "Times a platform refused the bot's credentials and sending to it stopped",
    ["platform", "code"],
    registry=REGISTRY,
)
INVALID_REQUESTS = Counter(
    "trendbot_platform_invalid_requests_total",
    "Requests a platform refused as invalid (Discord bans an IP for 10,000 of its 401, 403 "
    "and 429 answers in 10 minutes), by HTTP status",
    ["platform", "status"],
    registry=REGISTRY,
)
PLATFORM_UP = Gauge(
    "trendbot_platform_up",
    "1 while the platform accepts the bot's credentials, 0 while sending to it is stopped",
    ["platform"],
    registry=REGISTRY,
)
SOURCE_LAST_SUCCESS = Gauge(
    "trendbot_source_last_success_timestamp_seconds",
    "Unix time of the last successful poll of each source, by this replica",
    ["source"],
    registry=REGISTRY,
)
LEADER = Gauge(
    "trendbot_leader", "1 while this replica holds the leader lease, else 0", registry=REGISTRY
)
REPLICAS_LIVE = Gauge(
    "trendbot_replicas_live",
    "Replicas holding a live presence lease, as this replica last counted them",
    registry=REGISTRY,
)
