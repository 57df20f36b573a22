"""Chats keep their history under their current address; ``shown_pages``, what ``latest`` showed.

* ``audit_log.chat`` and ``broadcasts.origin_chat`` name a chat by its address
  (``slack:C0GENERAL``); a Slack chat of a single-token setup moved to its workspace's
  address (``slack:T0TEST/C0GENERAL``) when the app was installed there, and its rows kept
  the old one (``stats`` counted its language toggles under a chat that no longer exists).
  Each such row takes the address of the one chat now known under it. From this revision on
  a chat that moves takes its rows along (``bot.store.merges``).
* ``shown_pages``: the pages a ``latest`` reply showed a chat; a vote counts only for a page
  the chat received (in a digest or an instant message, the ledger, or in ``latest``). Earlier
  builds did not record ``latest``: a page a chat already voted on counts as shown to it, so
  that its vote can still be taken back.

Revision ID: 0009_toggle_chat_ids
Revises: 0007_held_sends
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_toggle_chat_ids"
down_revision = "0007_held_sends"
branch_labels = None
depends_on = None

_CHUNK = 1000


def upgrade() -> None:
    op.create_table(
        "shown_pages",
        sa.Column("chat_pk", sa.Integer(), nullable=False),
        sa.Column("page_id", sa.Integer(), nullable=False),
        sa.Column("shown_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chat_pk"],
            ["chats.id"],
            name=op.f("fk_shown_pages_chat_pk_chats"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["page_id"],
            ["pages.id"],
            name=op.f("fk_shown_pages_page_id_pages"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chat_pk", "page_id", name=op.f("pk_shown_pages")),
    )
    conn = op.get_bind()
    _votes_shown(conn)
    _follow_slack_workspaces(conn)


def _votes_shown(conn: sa.Connection) -> None:
    """A page a chat voted on, outside the ledger, was shown by ``latest``."""
    conn.execute(
        sa.text(
            "INSERT INTO shown_pages (chat_pk, page_id, shown_at) "
            "SELECT v.chat_pk, v.page_id, MIN(v.voted_at) FROM votes v "
            "WHERE NOT EXISTS (SELECT 1 FROM chat_pages l "
            "WHERE l.chat_pk = v.chat_pk AND l.page_id = v.page_id) "
            "GROUP BY v.chat_pk, v.page_id"
        )
    )


def _follow_slack_workspaces(conn: sa.Connection) -> None:
    """Rows naming ``slack:C…`` where no chat has that id and exactly one has ``T…/C…``."""
    chats = conn.execute(sa.text("SELECT chat_id FROM chats WHERE platform = 'slack'")).scalars()
    known = set(chats)
    moved: dict[str, str | None] = {}
    for chat_id in known:
        team, slash, conversation = chat_id.partition("/")
        if not slash or not team or not conversation or conversation in known:
            continue
        # Two workspaces with the same conversation id: which one was meant is unknown.
        moved[conversation] = None if conversation in moved else chat_id
    pairs = [{"old": f"slack:{old}", "new": f"slack:{new}"} for old, new in moved.items() if new]
    for name, column in (("audit_log", "chat"), ("broadcasts", "origin_chat")):
        table = sa.table(name, sa.column(column, sa.String()))
        statement = (
            sa.update(table)
            .where(table.c[column] == sa.bindparam("old"))
            .values({column: sa.bindparam("new")})
        )
        for start in range(0, len(pairs), _CHUNK):
            conn.execute(statement, pairs[start : start + _CHUNK])


def downgrade() -> None:
    op.drop_table("shown_pages")
