"""The initial schema.

Before the first release the initial revision builds the tables straight from
``bot.store.schema``; once a release is out, this file gets a frozen copy of that schema
and every change becomes a revision of its own.

Revision ID: 0001
Revises:
"""

from alembic import op

from bot.store.schema import metadata

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    metadata.create_all(op.get_bind())
