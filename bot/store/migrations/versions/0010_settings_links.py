"""Links to a chat's settings page: ``settings_links``.

Only hashes are kept: of each link's token and of the browser session that opened it.
The table starts empty.

Revision ID: 0010_settings_links
Revises: 0009_toggle_chat_ids
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_settings_links"
down_revision = "0009_toggle_chat_ids"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "settings_links",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("session_hash", sa.String(length=64), nullable=True),
        sa.Column("session_expires_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["chat_pk"],
            ["chats.id"],
            name=op.f("fk_settings_links_chat_pk_chats"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_settings_links")),
        sa.UniqueConstraint("session_hash", name=op.f("uq_settings_links_session_hash")),
    )
    op.create_index("ix_settings_links_expires", "settings_links", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_settings_links_expires", table_name="settings_links")
    op.drop_table("settings_links")
