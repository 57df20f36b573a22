"""Tables of the whole product, as SQLAlchemy Core metadata.

The flow is visible in the tables: ``sources`` and ``source_files`` (what was scanned) ->
``pages``, ``page_texts``, ``page_tags`` (what the wiki holds) -> ``page_events`` (the
notifications a poll queues) -> ``chats``, ``chat_tags`` (who wants what) ->
``chat_pages`` (the ledger: which version of which page was planned for which chat,
so nothing is sent twice) -> ``outbox`` (messages to send, with their delivery state).
``broadcasts`` and ``audit_log`` serve the admins; ``leases`` elect one leader among
replicas.

Times are naive UTC datetimes; dates are the wiki's own dates.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

sources = Table(
    "sources",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(2000), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),  # directory | feed
    Column("baseline_at", DateTime, nullable=True),  # first successful scan
    Column("last_poll_at", DateTime, nullable=True),
    Column("last_ok_at", DateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("etag", String(1000), nullable=True),
    Column("last_modified", String(200), nullable=True),
)

source_files = Table(
    "source_files",
    metadata,
    Column("source_id", ForeignKey("sources.id", ondelete="CASCADE"), primary_key=True),
    Column("path", String(1000), primary_key=True),
    Column("mtime_ns", BigInteger, nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("error", Text, nullable=True),
)

pages = Table(
    "pages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("source_id", ForeignKey("sources.id", ondelete="CASCADE"), nullable=False),
    Column("key", String(1000), nullable=False),
    Column("url", String(2000), nullable=True),
    Column("type", String(64), nullable=True),
    Column("arxiv", String(64), nullable=True),
    Column("created", Date, nullable=True),
    Column("updated", Date, nullable=True),
    Column("fingerprint", String(64), nullable=False),
    Column("first_seen_at", DateTime, nullable=False),
    Column("changed_at", DateTime, nullable=False),
    Column("removed_at", DateTime, nullable=True),
    UniqueConstraint("source_id", "key"),
)

page_texts = Table(
    "page_texts",
    metadata,
    Column("page_id", ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
    Column("lang", String(8), primary_key=True),
    Column("title", Text, nullable=False),
    Column("tldr", Text, nullable=False),
)

page_tags = Table(
    "page_tags",
    metadata,
    Column("page_id", ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
    Column("tag", String(64), primary_key=True),
    Column("position", Integer, nullable=False, default=0),
    Index("ix_page_tags_tag", "tag"),
)

page_events = Table(
    "page_events",
    metadata,
    Column("id", Integer, primary_key=True),  # the sequence chats' cursors point into
    Column("page_id", ForeignKey("pages.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(16), nullable=False),  # new | updated
    Column("fingerprint", String(64), nullable=False),
    Column("created_at", DateTime, nullable=False),
)

chats = Table(
    "chats",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("platform", String(16), nullable=False),
    Column("chat_id", String(64), nullable=False),
    Column("kind", String(16), nullable=False),  # private | group
    Column("title", String(255), nullable=True),
    Column("state", String(16), nullable=False),  # active | paused | inactive
    Column("mode", String(16), nullable=False),  # daily | instant
    Column("digest_time", String(5), nullable=False),  # HH:MM, local
    Column("timezone", String(64), nullable=False),
    Column("lang", String(8), nullable=False),
    Column("filter", Text, nullable=False),  # canonical filter text
    Column("cursor", Integer, nullable=False, default=0),  # last page_events.id considered
    Column("next_digest_at", DateTime, nullable=True),  # UTC, daily mode
    Column("inactive_reason", Text, nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    UniqueConstraint("platform", "chat_id"),
    Index("ix_chats_due", "state", "next_digest_at"),
)

chat_tags = Table(
    "chat_tags",
    metadata,
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True),
    Column("tag", String(64), primary_key=True),
    Column("kind", String(16), nullable=False),  # any | required | excluded
    Index("ix_chat_tags_tag", "tag"),
)

chat_pages = Table(
    "chat_pages",
    metadata,
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True),
    Column("page_id", ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
    Column("fingerprint", String(64), nullable=False),  # the version planned for the chat
    Column("outbox_id", BigInteger, nullable=True),
    Column("planned_at", DateTime, nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), nullable=False),
    Column("platform", String(16), nullable=False),  # copied from the chat, for claiming
    Column("kind", String(16), nullable=False),  # digest | page | broadcast | notice
    Column("payload", Text, nullable=False),  # JSON
    Column("status", String(16), nullable=False),  # queued | sending | sent | failed | dropped
    Column("priority", Integer, nullable=False, default=0),
    Column("attempts", Integer, nullable=False, default=0),
    Column("parts_sent", Integer, nullable=False, default=0),
    Column("thread_ref", String(64), nullable=True),  # Slack: ts of the first message
    Column("not_before", DateTime, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("claimed_at", DateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("broadcast_id", ForeignKey("broadcasts.id", ondelete="SET NULL"), nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("sent_at", DateTime, nullable=True),
    Index("ix_outbox_ready", "status", "not_before"),
    Index("ix_outbox_chat", "chat_pk", "status"),
    Index("ix_outbox_broadcast", "broadcast_id", "status"),
)

broadcasts = Table(
    "broadcasts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("text", Text, nullable=False),
    Column("audience", Text, nullable=False),  # JSON: tags, platform, lang
    Column("audience_size", Integer, nullable=False),
    Column("created_by", String(128), nullable=False),  # platform:user_id
    Column("origin_chat", String(128), nullable=True),  # platform:chat_id of the preview
    Column("status", String(16), nullable=False),  # previewed | confirmed | cancelled | done
    Column("created_at", DateTime, nullable=False),
    Column("confirmed_at", DateTime, nullable=True),
    Column("finished_at", DateTime, nullable=True),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("at", DateTime, nullable=False),
    Column("actor", String(128), nullable=False),  # platform:user_id, or "shell"
    Column("chat", String(128), nullable=True),
    Column("action", String(64), nullable=False),
    Column("allowed", Boolean, nullable=False),
    Column("detail", Text, nullable=True),  # JSON
    Index("ix_audit_log_at", "at"),
)

leases = Table(
    "leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(128), nullable=False),
    Column("expires_at", DateTime, nullable=False),
)
