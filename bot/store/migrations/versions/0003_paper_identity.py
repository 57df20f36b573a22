"""Pages: ``paper``, a paper's one identity across sources, indexed.

``arxiv:ID`` (the arXiv id without version), ``doi:DOI`` or ``path:KEY``; the pages of one
paper are delivered once. Existing rows are filled from their ``arxiv`` and ``key``
(a DOI is not stored by earlier builds: the next scan of a page that names one fills it).
The rules are spelled out here, frozen, as of this revision: ``bot.papers`` may grow.

The column is added as nullable so that SQLite adds it in place: rebuilding ``pages``
would drop the ledger's triggers on it.

Revision ID: 0003_paper_identity
Revises: 0002_baseline
"""

import re

import sqlalchemy as sa
from alembic import op

revision = "0003_paper_identity"
down_revision = "0002_baseline"
branch_labels = None
depends_on = None

_ARXIV_ID = re.compile(
    r"(?:arxiv:)?(\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[a-z]{2})?/\d{7})(?:v\d+)?", re.IGNORECASE
)
_CHUNK = 1000


def _paper(arxiv: str | None, key: str) -> str:
    found = _ARXIV_ID.fullmatch(arxiv.strip()) if arxiv else None
    if found:
        value = found.group(1)
        return "arxiv:" + (value.lower() if "/" in value else value)
    return ("path:" + key)[:1000]


def upgrade() -> None:
    op.add_column("pages", sa.Column("paper", sa.String(length=1000), nullable=True))
    pages = sa.table(
        "pages",
        sa.column("id", sa.Integer()),
        sa.column("key", sa.String()),
        sa.column("arxiv", sa.String()),
        sa.column("paper", sa.String()),
    )
    conn = op.get_bind()
    rows = conn.execute(sa.select(pages.c.id, pages.c.key, pages.c.arxiv)).all()
    update = (
        sa.update(pages)
        .where(pages.c.id == sa.bindparam("page_id"))
        .values(paper=sa.bindparam("value"))
    )
    values = [{"page_id": i, "value": _paper(arxiv, key)} for i, key, arxiv in rows]
    for start in range(0, len(values), _CHUNK):
        conn.execute(update, values[start : start + _CHUNK])
    op.create_index("ix_pages_paper", "pages", ["paper"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_pages_paper", table_name="pages")
    op.drop_column("pages", "paper")
