"""Sources: ``active``, whether a source is in ``WIKI_SOURCES`` at the last start or poll,
and ``active_changed_at``, when that last changed (a private feed changed then).

The pages of a source no longer configured leave every surface (``bot.store.current``);
what was delivered of them stays in the history, and they come back with the source.
Every source an earlier build recorded starts active: the next start or poll sets the
flag from the configuration.

Revision ID: 0006_active_sources
Revises: 0005_public_sources
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_active_sources"
down_revision = "0005_public_sources"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "sources", sa.Column("active", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    op.add_column("sources", sa.Column("active_changed_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("sources", "active_changed_at")
    op.drop_column("sources", "active")
