"""Tag followers by day: ``tag_followers``, the history of the ``stats`` chart.

One row a UTC day and tag: how many active chats followed the tag that day. The table
starts empty; the running service records each day from then on.

Revision ID: 0004_tag_followers
Revises: 0003_paper_identity
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_tag_followers"
down_revision = "0003_paper_identity"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tag_followers",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("tag", sa.String(length=64), nullable=False),
        sa.Column("chats", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("day", "tag", name=op.f("pk_tag_followers")),
    )


def downgrade() -> None:
    op.drop_table("tag_followers")
