"""Sends whose outcome is unknown: ``outbox.unknown_sends``.

A send that timed out after its request left may have arrived. The count of such sends of a
message is kept with it, so that it is re-sent at most once after one, across restarts; a
message whose re-send has no answer either is ``held`` (a status: no column needed).
Existing rows start at 0.

Revision ID: 0007_held_sends
Revises: 0006_active_sources
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_held_sends"
down_revision = "0006_active_sources"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "outbox", sa.Column("unknown_sends", sa.Integer(), nullable=False, server_default="0")
    )


def downgrade() -> None:
    op.drop_column("outbox", "unknown_sends")
