"""The baseline: the schema of the first release, frozen.

Every table, index and trigger is spelled out here; nothing is built from the models, so
a later change to ``bot.store.schema`` never changes what this revision creates. Each such
change comes with a revision of its own (``tests/integration/test_migrations.py`` fails on
a model that the migrations do not produce).

A database stamped ``0001`` was made before the first release, by ``create_all`` of the
schema of its day; ``scripts/adopt_prerelease.py`` brings it to this revision's shape and
stamps it (the bot refuses it until then).

Revision ID: 0002_baseline
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_baseline"
down_revision = None
branch_labels = None
depends_on = None

# What ``ON DELETE CASCADE`` would do for the ledger ``chat_pages``, which has no foreign
# keys (see ``bot.store.schema``): PostgreSQL deletes a statement's rows at once, SQLite
# has only row triggers.
LEDGER_TRIGGERS = {
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


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("chat", sa.String(length=128), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("allowed", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"], unique=False)
    op.create_table(
        "auth_failures",
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("failed_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("platform", name=op.f("pk_auth_failures")),
    )
    op.create_table(
        "broadcasts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("audience", sa.Text(), nullable=False),
        sa.Column("audience_size", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        sa.Column("origin_chat", sa.String(length=128), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_broadcasts")),
    )
    op.create_table(
        "chat_pages",
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("page_id", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("planned_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("chat_pk", "page_id", name=op.f("pk_chat_pages")),
    )
    op.create_table(
        "chats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("chat_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(length=255), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("digest_time", sa.String(length=5), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("lang", sa.String(length=8), nullable=False),
        sa.Column("filter", sa.Text(), nullable=False),
        sa.Column("cursor", sa.Integer(), nullable=False),
        sa.Column("next_digest_at", sa.DateTime(), nullable=True),
        sa.Column("inactive_reason", sa.Text(), nullable=True),
        sa.Column("inactive_code", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("weekday", sa.Integer(), nullable=False),
        sa.Column("quiet", sa.String(length=11), nullable=True),
        sa.Column("digest_limit", sa.Integer(), nullable=True),
        sa.Column("held_until", sa.DateTime(), nullable=True),
        sa.Column("team_id", sa.String(length=32), nullable=True),
        sa.Column("enterprise_id", sa.String(length=32), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chats")),
        sa.UniqueConstraint("platform", "chat_id", name=op.f("uq_chats_platform")),
    )
    op.create_index("ix_chats_due", "chats", ["state", "next_digest_at"], unique=False)
    op.create_index("ix_chats_team", "chats", ["team_id"], unique=False)
    op.create_table(
        "incidents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=2100), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("cleared_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_incidents")),
    )
    op.create_index("ix_incidents_open", "incidents", ["cleared_at"], unique=False)
    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    op.create_table(
        "slack_installations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("enterprise_id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("is_enterprise_install", sa.Boolean(), nullable=False),
        sa.Column("app_id", sa.String(length=32), nullable=True),
        sa.Column("enterprise_name", sa.String(length=255), nullable=True),
        sa.Column("enterprise_url", sa.String(length=2000), nullable=True),
        sa.Column("team_name", sa.String(length=255), nullable=True),
        sa.Column("bot_id", sa.String(length=32), nullable=True),
        sa.Column("bot_user_id", sa.String(length=32), nullable=True),
        sa.Column("bot_scopes", sa.Text(), nullable=True),
        sa.Column("bot_token", sa.Text(), nullable=False),
        sa.Column("bot_refresh_token", sa.Text(), nullable=True),
        sa.Column("bot_token_expires_at", sa.DateTime(), nullable=True),
        sa.Column("installer_user_id", sa.String(length=32), nullable=True),
        sa.Column("token_type", sa.String(length=16), nullable=True),
        sa.Column("installed_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_slack_installations")),
        sa.UniqueConstraint(
            "enterprise_id", "team_id", name=op.f("uq_slack_installations_enterprise_id")
        ),
    )
    op.create_table(
        "slack_oauth_states",
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_slack_oauth_states")),
    )
    op.create_index(
        "ix_slack_oauth_states_expires", "slack_oauth_states", ["expires_at"], unique=False
    )
    op.create_table(
        "source_streaks",
        sa.Column("name", sa.String(length=2000), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_source_streaks")),
    )
    op.create_table(
        "sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=2000), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("baseline_at", sa.DateTime(), nullable=True),
        sa.Column("last_poll_at", sa.DateTime(), nullable=True),
        sa.Column("last_ok_at", sa.DateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("etag", sa.String(length=1000), nullable=True),
        sa.Column("last_modified", sa.String(length=200), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sources")),
        sa.UniqueConstraint("name", name=op.f("uq_sources_name")),
    )
    op.create_table(
        "alert_admins",
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("chat_pk", sa.Integer(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_pk"],
            ["chats.id"],
            name=op.f("fk_alert_admins_chat_pk_chats"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("platform", "user_id", name=op.f("pk_alert_admins")),
    )
    op.create_table(
        "chat_feeds",
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_pk"], ["chats.id"], name=op.f("fk_chat_feeds_chat_pk_chats"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("chat_pk", name=op.f("pk_chat_feeds")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_chat_feeds_token_hash")),
    )
    op.create_table(
        "chat_tags",
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_pk"], ["chats.id"], name=op.f("fk_chat_tags_chat_pk_chats"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("chat_pk", "tag", name=op.f("pk_chat_tags")),
    )
    op.create_index("ix_chat_tags_tag", "chat_tags", ["tag"], unique=False)
    op.create_table(
        "chat_weights",
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("weights", sa.Text(), nullable=False),
        sa.Column("based_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_pk"],
            ["chats.id"],
            name=op.f("fk_chat_weights_chat_pk_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chat_pk", name=op.f("pk_chat_weights")),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("parts_sent", sa.Integer(), nullable=False),
        sa.Column("thread_ref", sa.String(length=64), nullable=True),
        sa.Column("not_before", sa.DateTime(), nullable=False),
        sa.Column("claimed_by", sa.String(length=64), nullable=True),
        sa.Column("claimed_at", sa.DateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("broadcast_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("sent_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["broadcast_id"],
            ["broadcasts.id"],
            name=op.f("fk_outbox_broadcast_id_broadcasts"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["chat_pk"], ["chats.id"], name=op.f("fk_outbox_chat_pk_chats"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
    )
    op.create_index("ix_outbox_broadcast", "outbox", ["broadcast_id", "status"], unique=False)
    op.create_index("ix_outbox_chat", "outbox", ["chat_pk", "status"], unique=False)
    op.create_index(
        "ix_outbox_ready",
        "outbox",
        ["status", sa.text("priority DESC"), "not_before", "id"],
        unique=False,
    )
    op.create_table(
        "pages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=1000), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=True),
        sa.Column("type", sa.String(length=64), nullable=True),
        sa.Column("arxiv", sa.String(length=64), nullable=True),
        sa.Column("created", sa.Date(), nullable=True),
        sa.Column("updated", sa.Date(), nullable=True),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(), nullable=False),
        sa.Column("changed_at", sa.DateTime(), nullable=False),
        sa.Column("removed_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.id"],
            name=op.f("fk_pages_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pages")),
        sa.UniqueConstraint("source_id", "key", name=op.f("uq_pages_source_id")),
    )
    op.create_table(
        "source_files",
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=1000), nullable=False),
        sa.Column("mtime_ns", sa.BigInteger(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["sources.id"],
            name=op.f("fk_source_files_source_id_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("source_id", "path", name=op.f("pk_source_files")),
    )
    op.create_table(
        "page_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("page_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["page_id"], ["pages.id"], name=op.f("fk_page_events_page_id_pages"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_page_events")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "page_tags",
        sa.Column("page_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["page_id"], ["pages.id"], name=op.f("fk_page_tags_page_id_pages"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("page_id", "tag", name=op.f("pk_page_tags")),
    )
    op.create_index("ix_page_tags_tag", "page_tags", ["tag"], unique=False)
    op.create_table(
        "page_texts",
        sa.Column("page_id", sa.Integer(), nullable=False),
        sa.Column("lang", sa.String(length=8), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("tldr", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["page_id"], ["pages.id"], name=op.f("fk_page_texts_page_id_pages"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("page_id", "lang", name=op.f("pk_page_texts")),
    )
    op.create_table(
        "votes",
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("page_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.Column("voted_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_pk"], ["chats.id"], name=op.f("fk_votes_chat_pk_chats"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["page_id"], ["pages.id"], name=op.f("fk_votes_page_id_pages"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("chat_pk", "page_id", "user_id", name=op.f("pk_votes")),
    )
    for statement in LEDGER_TRIGGERS.get(op.get_context().dialect.name, ()):
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("the baseline is the first revision: nothing comes before it")
