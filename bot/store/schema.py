"""Tables of the whole product, as SQLAlchemy Core metadata.

The flow is visible in the tables: ``sources`` and ``source_files`` (what was scanned) ->
``pages``, ``page_texts``, ``page_tags`` (what the wiki holds) -> ``page_events`` (the
notifications a poll queues) -> ``chats``, ``chat_tags`` (who wants what) ->
``chat_pages`` (the ledger: which version of which page was planned for which chat,
so nothing is sent twice) -> ``outbox`` (messages to send, with their delivery state).
``broadcasts`` and ``audit_log`` serve the admins, ``tag_followers`` keeps the history
their ``stats`` chart draws; ``leases`` elect one leader among replicas. ``votes`` count
for the pages a chat received: the ledger's and ``shown_pages`` (what ``latest`` showed).

Times are naive UTC datetimes; dates are the wiki's own dates.
"""

from __future__ import annotations

from typing import Any

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
    event,
    true,
)
from sqlalchemy.engine import Connection

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
    Column("kind", String(16), nullable=False),  # directory | git | feed
    Column("baseline_at", DateTime, nullable=True),  # first successful scan
    Column("last_poll_at", DateTime, nullable=True),
    Column("last_ok_at", DateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("etag", String(1000), nullable=True),
    Column("last_modified", String(200), nullable=True),
    # In WIKI_SOURCES at the last start or poll (``bot.store.current``): the pages of a
    # source no longer configured leave every surface, and come back with it.
    Column("active", Boolean, nullable=False, server_default=true()),
    Column("active_changed_at", DateTime, nullable=True),  # when ``active`` last changed
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
    # The paper's identity across sources (bot.papers): ``arxiv:ID``, ``doi:DOI`` or
    # ``path:KEY``. Pages of one paper are delivered once; planning looks a paper's pages
    # up by it. Every row has one (revision 0003 filled the older rows); a rename keeps it.
    Column("paper", String(1000), nullable=True),
    UniqueConstraint("source_id", "key"),
    Index("ix_pages_paper", "paper"),
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
    # Ids never given again (SQLite would reuse the id of the newest event once it is
    # deleted with its page, and chats whose cursor had passed it would miss the next).
    sqlite_autoincrement=True,
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
    Column("inactive_reason", Text, nullable=True),  # for people: logs, `why`
    # A short stable word for the same (the DeliveryError's code, ``is_archived``...): what
    # the code compares when a chat may come back.
    Column("inactive_code", String(64), nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("weekday", Integer, nullable=False, default=0),  # weekly mode: 0 = Monday
    Column("quiet", String(11), nullable=True),  # HH:MM-HH:MM, local
    Column("digest_limit", Integer, nullable=True),  # pages a digest shows at most
    Column("held_until", DateTime, nullable=True),  # UTC: instant pages held by quiet hours
    # Slack: the chat's workspace (and Enterprise Grid organisation), whose token sends to it.
    Column("team_id", String(32), nullable=True),
    Column("enterprise_id", String(32), nullable=True),
    UniqueConstraint("platform", "chat_id"),
    Index("ix_chats_team", "team_id"),
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

# The ledger has no foreign keys: planning writes over a million of its rows for 100,000
# chats, and checking each row's chat and page was two thirds of PostgreSQL's work. Its
# rows go with their chat or page all the same, by the triggers below.
chat_pages = Table(
    "chat_pages",
    metadata,
    Column("chat_pk", Integer, primary_key=True),  # chats.id
    Column("page_id", Integer, primary_key=True),  # pages.id
    Column("fingerprint", String(64), nullable=False),  # the version planned for the chat
    Column("planned_at", DateTime, nullable=False),
)

# What ``ON DELETE CASCADE`` did for the ledger, for a chat or page deleted by hand or with
# its source. A stale row would not be harmless: SQLite may give a deleted chat's or page's
# id to a new one, which would then count as having had pages it never got. (On PostgreSQL
# ids are never given again, so the one row a delete may miss, that of a page being planned
# at that moment, is never read; a chat being planned is locked until its rows are in.)
# PostgreSQL deletes a statement's rows at once, as a page's rows have no index of their
# own; SQLite has only row triggers.
_LEDGER_CLEANUP = {
    "postgresql": [
        """CREATE FUNCTION chat_pages_forget_chats() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN DELETE FROM chat_pages WHERE chat_pk IN (SELECT id FROM gone); RETURN NULL; END
        $$""",
        """CREATE FUNCTION chat_pages_forget_pages() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN DELETE FROM chat_pages WHERE page_id IN (SELECT id FROM gone); RETURN NULL; END
        $$""",
        """CREATE TRIGGER chat_pages_forget_chats AFTER DELETE ON chats
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
        EXECUTE FUNCTION chat_pages_forget_chats()""",
        """CREATE TRIGGER chat_pages_forget_pages AFTER DELETE ON pages
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
        EXECUTE FUNCTION chat_pages_forget_pages()""",
    ],
    "sqlite": [
        """CREATE TRIGGER chat_pages_forget_chat AFTER DELETE ON chats
        BEGIN DELETE FROM chat_pages WHERE chat_pk = OLD.id; END""",
        """CREATE TRIGGER chat_pages_forget_page AFTER DELETE ON pages
        BEGIN DELETE FROM chat_pages WHERE page_id = OLD.id; END""",
    ],
}


@event.listens_for(metadata, "after_create")
def _create_ledger_cleanup(_target: MetaData, connection: Connection, **_kw: Any) -> None:
    """Once every table exists: the ledger no longer comes after chats and pages."""
    for statement in _LEDGER_CLEANUP.get(connection.dialect.name, ()):
        connection.exec_driver_sql(statement)


# Feedback: one row per chat, page and user (a group's members vote once each); +1 or -1.
votes = Table(
    "votes",
    metadata,
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True),
    Column("page_id", ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", String(128), primary_key=True),
    Column("value", Integer, nullable=False),
    Column("voted_at", DateTime, nullable=False),
)

# The pages a ``latest`` reply showed a chat, with their 👍/👎 (digests and instant messages
# are in the ledger, ``chat_pages``): a vote counts only for a page the chat was shown.
shown_pages = Table(
    "shown_pages",
    metadata,
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True),
    Column("page_id", ForeignKey("pages.id", ondelete="CASCADE"), primary_key=True),
    Column("shown_at", DateTime, nullable=False),
)

# The tag weights a chat's votes give, worked out at ``based_at`` each time a vote changes
# (JSON ``{tag: weight}``): planning reads one short text per chat, not every vote.
chat_weights = Table(
    "chat_weights",
    metadata,
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True),
    Column("weights", Text, nullable=False),
    Column("based_at", DateTime, nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), nullable=False),
    Column("platform", String(16), nullable=False),  # copied from the chat, for claiming
    Column("kind", String(16), nullable=False),  # digest | page | broadcast | notice
    Column("payload", Text, nullable=False),  # JSON
    # queued | sending | sent | failed | dropped | held (sent with no answer twice: it may
    # have arrived, and is not sent again)
    Column("status", String(16), nullable=False),
    Column("priority", Integer, nullable=False, default=0),
    Column("attempts", Integer, nullable=False, default=0),
    Column("parts_sent", Integer, nullable=False, default=0),
    # Sends of this message whose outcome is unknown (a timeout after the request left):
    # each may have arrived. A message is re-sent at most once after one.
    Column("unknown_sends", Integer, nullable=False, default=0, server_default="0"),
    Column("thread_ref", String(64), nullable=True),  # Slack: ts of the first message
    Column("not_before", DateTime, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("claimed_at", DateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("broadcast_id", ForeignKey("broadcasts.id", ondelete="SET NULL"), nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("sent_at", DateTime, nullable=True),
    Index("ix_outbox_chat", "chat_pk", "status"),
    Index("ix_outbox_broadcast", "broadcast_id", "status"),
)
# Claims walk the due rows in this order and stop at the batch's size. On (status,
# not_before) alone, every claim read every queued row and sorted them all: a claim of 500
# from a million queued messages read the million.
Index(
    "ix_outbox_ready",
    outbox.c.status,
    outbox.c.priority.desc(),
    outbox.c.not_before,
    outbox.c.id,
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

# Active chats following each tag, recorded once a UTC day (``bot.store.trends``).
tag_followers = Table(
    "tag_followers",
    metadata,
    Column("day", Date, primary_key=True),  # UTC
    Column("tag", String(64), primary_key=True),
    Column("chats", Integer, nullable=False),
)

leases = Table(
    "leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(128), nullable=False),
    Column("expires_at", DateTime, nullable=False),
)

# A chat's private Atom feed: only a hash of its secret token is kept (``feed``).
chat_feeds = Table(
    "chat_feeds",
    metadata,
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),  # sha256, hex
    Column("created_at", DateTime, nullable=False),
)

# Links to a chat's settings page (``settings``): only hashes are kept, of the link's
# token and of the browser session that opened it. A link opens once, before
# ``expires_at``; its session works until ``session_expires_at``.
settings_links = Table(
    "settings_links",
    metadata,
    Column("token_hash", String(64), primary_key=True),  # sha256, hex
    Column("chat_pk", ForeignKey("chats.id", ondelete="CASCADE"), nullable=False),
    Column("expires_at", DateTime, nullable=False),
    Column("session_hash", String(64), nullable=True, unique=True),  # sha256, hex
    Column("session_expires_at", DateTime, nullable=True),
    Index("ix_settings_links_expires", "expires_at"),
)

# Operator alerts: each admin's choice (``alerts on|off``) and private chat with the bot.
alert_admins = Table(
    "alert_admins",
    metadata,
    Column("platform", String(16), primary_key=True),
    Column("user_id", String(64), primary_key=True),
    Column("chat_pk", ForeignKey("chats.id", ondelete="SET NULL"), nullable=True),
    Column("enabled", Boolean, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)

# Incidents the admins were told of; an open one has no ``cleared_at``.
incidents = Table(
    "incidents",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("key", String(2100), nullable=False),  # e.g. source:examples/wiki, sends:slack
    Column("detail", Text, nullable=False),  # JSON: what the start alert said
    Column("started_at", DateTime, nullable=False),
    Column("cleared_at", DateTime, nullable=True),
    Index("ix_incidents_open", "cleared_at"),
)

# Failed polls in a row per source, and the last authentication failure per platform:
# what the incident checks read.
source_streaks = Table(
    "source_streaks",
    metadata,
    Column("name", String(2000), primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("last_error", Text, nullable=True),
    Column("updated_at", DateTime, nullable=False),
)

auth_failures = Table(
    "auth_failures",
    metadata,
    Column("platform", String(16), primary_key=True),
    Column("reason", Text, nullable=False),
    Column("failed_at", DateTime, nullable=False),
)

# Slack workspaces (or Enterprise Grid organisations) that installed the app by OAuth. One
# row per installation: ``enterprise_id`` and ``team_id`` are "" where Slack gives none (an
# org-wide install has no team), so that the pair can be unique on every database. Tokens
# are stored encrypted (Fernet, ``SLACK_TOKEN_KEY``), never in the clear.
slack_installations = Table(
    "slack_installations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("enterprise_id", String(32), nullable=False),
    Column("team_id", String(32), nullable=False),
    Column("is_enterprise_install", Boolean, nullable=False),
    Column("app_id", String(32), nullable=True),
    Column("enterprise_name", String(255), nullable=True),
    Column("enterprise_url", String(2000), nullable=True),
    Column("team_name", String(255), nullable=True),
    Column("bot_id", String(32), nullable=True),
    Column("bot_user_id", String(32), nullable=True),
    Column("bot_scopes", Text, nullable=True),  # comma-separated
    Column("bot_token", Text, nullable=False),  # encrypted
    Column("bot_refresh_token", Text, nullable=True),  # encrypted; with token rotation
    Column("bot_token_expires_at", DateTime, nullable=True),  # UTC; with token rotation
    Column("installer_user_id", String(32), nullable=True),  # the workspace's admin here
    Column("token_type", String(16), nullable=True),
    Column("installed_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    UniqueConstraint("enterprise_id", "team_id"),
)

# OAuth states handed out by ``GET /slack/install``, kept as HMACs under
# ``SLACK_STATE_SECRET``; a row is deleted as it is used, so a state works once.
slack_oauth_states = Table(
    "slack_oauth_states",
    metadata,
    Column("state_hash", String(64), primary_key=True),  # HMAC-SHA256, hex
    Column("expires_at", DateTime, nullable=False),
    Index("ix_slack_oauth_states_expires", "expires_at"),
)
