"""Sources by their public identity: nothing of a feed's credentials stays stored.

Earlier builds kept each source under its ``WIKI_SOURCES`` entry as configured
(``http://user:pass@host/feed.atom?token=…``), and resolved a feed's relative links and ids
against it, so page keys, links, paper identities and queued messages held the credentials
too. This revision rewrites every such row to the public identity the running code derives
(:func:`bot.rules.sources.parse_source`: the URL without user info and secret query values),
and keeps each source's history:

- a source is renamed in place (its id, baseline and pages stay); two rows that are one
  source once their credentials are set aside (a token rotated: the earlier builds made a
  new row) become one, the oldest, with the newest poll's state;
- a page key, link or ``path:`` identity that held a credential is rewritten as the running
  code now makes it; two pages that become one are merged into the older, which takes the
  other's ledger rows, votes and events, and the queued messages that named it;
- the streaks and incidents of a former release, keyed by the configured URL, are keyed
  by its public identity (the alert service then moves them to the source's id);
- whatever text still holds a credential (a queued message, an error, an audit detail) has
  the user info taken out of its URLs and each credential replaced by ``[redacted]``.

On SQLite, ``secure_delete`` is on for the rewrite, and the file is rebuilt (``VACUUM``)
once the upgrade is committed, so it keeps no freed copy of the old text.

Revision ID: 0005_public_sources
Revises: 0004_tag_followers
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.engine import Connection

from bot.rules.sources import REDACTED, SourceSpec, parse_source, public_identity
from bot.store.engine import COMPACT_AFTER_UPGRADE

revision = "0005_public_sources"
down_revision = "0004_tag_followers"
branch_labels = None
depends_on = None

_sources = sa.table(
    "sources",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("last_poll_at", sa.DateTime),
    sa.column("last_ok_at", sa.DateTime),
    sa.column("last_error", sa.Text),
    sa.column("etag", sa.String),
    sa.column("last_modified", sa.String),
)
_pages = sa.table(
    "pages",
    sa.column("id", sa.Integer),
    sa.column("source_id", sa.Integer),
    sa.column("key", sa.String),
    sa.column("url", sa.String),
    sa.column("paper", sa.String),
)
_POLL_STATE = ("last_poll_at", "last_ok_at", "last_error", "etag", "last_modified")
_PATH = "path:"
_SOURCE_KEY = "source:"
MAX_KEY_CHARS = 1000  # pages.key, pages.paper
MAX_URL_CHARS = 2000  # pages.url


class _Found:
    """The credentials of every stored source: their values, and the URL prefixes with
    user info (``http://user:pass@``) that become ``http://``."""

    def __init__(self) -> None:
        self.values: set[str] = set()
        self.prefixes: dict[str, str] = {}

    def add(self, name: str, spec: SourceSpec) -> None:
        self.values.update(spec.credentials.values())
        scheme, _, rest = name.strip().partition("://")
        authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if "@" in authority and spec.credentials:
            userinfo = authority.rpartition("@")[0]
            for shown in {scheme, scheme.lower(), scheme.removeprefix("git+")}:
                self.prefixes[f"{shown}://{userinfo}@"] = f"{shown}://"

    def holds(self, text: str) -> bool:
        return any(s in text for s in self.values) or any(p in text for p in self.prefixes)

    def scrub(self, text: str) -> str:
        for prefix, public in self.prefixes.items():
            text = text.replace(prefix, public)
        for value in sorted(self.values, key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    def clean(self, value: str) -> str:
        """A stored key, link or name without credentials, as the running code makes it."""
        if not self.holds(value):
            return value
        if value.lower().startswith(("http://", "https://", "git+")):
            value = public_identity(value)
        return self.scrub(value)


def _spec(name: str) -> SourceSpec:
    try:
        return parse_source(name)
    except ValueError:
        return SourceSpec(public=public_identity(name), kind="feed")


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        bind.exec_driver_sql("PRAGMA secure_delete = ON")
    rows = bind.execute(sa.select(_sources).order_by(_sources.c.id)).mappings().all()
    found = _Found()
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        spec = _spec(row["name"])
        found.add(row["name"], spec)
        groups.setdefault(spec.public, []).append(dict(row))
    if not found.values and not found.prefixes:
        return  # no credential was ever stored
    merges: dict[int, int] = {}  # page id -> the page it becomes
    changes: list[dict[str, object]] = []
    for members in groups.values():
        _plan_pages(bind, [m["id"] for m in members], found, merges=merges, changes=changes)
    _merge_pages(bind, merges)
    if changes:  # one statement, many rows: a feed may have thousands of pages
        bind.execute(
            sa.update(_pages)
            .where(_pages.c.id == sa.bindparam("pid"))
            .values(
                source_id=sa.bindparam("s"),
                key=sa.bindparam("k"),
                url=sa.bindparam("u"),
                paper=sa.bindparam("p"),
            ),
            changes,
        )
    for public, members in groups.items():
        for other in members[1:]:
            gone = {"id": other["id"]}
            bind.execute(sa.text("DELETE FROM source_files WHERE source_id = :id"), gone)
            bind.execute(sa.text("DELETE FROM sources WHERE id = :id"), gone)
        newest = max(members, key=lambda r: r["last_poll_at"] or dt.datetime.min)
        state = {name: newest[name] for name in _POLL_STATE}
        if state["last_error"]:
            state["last_error"] = found.scrub(state["last_error"])
        bind.execute(
            sa.update(_sources)
            .where(_sources.c.id == members[0]["id"])
            .values(name=public, **state)
        )
    _rekey(bind, "source_streaks", "name", found, prefix="", primary=True)
    _rekey(bind, "incidents", "key", found, prefix=_SOURCE_KEY, primary=False)
    _scrub_text(bind, found)
    config = op.get_context().config
    if config is not None:  # SQLite: the file is rebuilt after the upgrade (VACUUM)
        config.attributes[COMPACT_AFTER_UPGRADE] = True


def _plan_pages(
    bind: Connection,
    source_ids: list[int],
    found: _Found,
    *,
    merges: dict[int, int],
    changes: list[dict[str, object]],
) -> None:
    """The pages of one source (its rows, the oldest first): each key, link and path
    identity as the running code makes it, all under the oldest row. Two pages that become
    one (one feed under two tokens, or a key that held a credential) are recorded in
    ``merges`` (the newer becomes the older); the others that change, in ``changes``."""
    into = source_ids[0]
    rows = bind.execute(
        sa.select(_pages.c.id, _pages.c.source_id, _pages.c.key, _pages.c.url, _pages.c.paper)
        .where(_pages.c.source_id.in_(source_ids))
        .order_by(_pages.c.id)
    ).all()
    kept: dict[str, int] = {}  # new key -> the page that keeps it
    final: dict[int, dict[str, object]] = {}
    for page_id, source_id, key, url, paper in rows:
        new_key = found.clean(key)[:MAX_KEY_CHARS]
        new_url = found.clean(url)[:MAX_URL_CHARS] if url is not None else None
        if paper is not None and paper == f"{_PATH}{key}"[:MAX_KEY_CHARS]:
            new_paper: str | None = f"{_PATH}{new_key}"[:MAX_KEY_CHARS]
        else:
            new_paper = found.clean(paper)[:MAX_KEY_CHARS] if paper is not None else None
        twin = kept.get(new_key)
        if twin is not None:  # ids ascend: the twin is the older page, and stays
            merges[page_id] = twin
            continue
        kept[new_key] = page_id
        if (source_id, new_key, new_url, new_paper) != (into, key, url, paper):
            final[page_id] = {"pid": page_id, "s": into, "k": new_key, "u": new_url, "p": new_paper}
    changes.extend(final.values())


def _merge_pages(bind: Connection, merges: dict[int, int]) -> None:
    """Each page of ``merges`` becomes the page it maps to: its ledger rows, votes and
    events move there (where that page has no row of its own), so do the queued messages
    that name it; then it goes. Set-based, through a temporary table: the ledger may have
    millions of rows, and none is read more than once."""
    if not merges:
        return
    bind.execute(
        sa.text(
            "CREATE TEMPORARY TABLE page_merges (gone INTEGER PRIMARY KEY, keep INTEGER NOT NULL)"
        )
    )
    bind.execute(
        sa.text("INSERT INTO page_merges (gone, keep) VALUES (:gone, :keep)"),
        [{"gone": gone, "keep": keep} for gone, keep in merges.items()],
    )
    keep_of = "(SELECT m.keep FROM page_merges m WHERE m.gone = {table}.page_id)"
    for table, same in (
        ("chat_pages", "t.chat_pk = {table}.chat_pk"),
        ("votes", "t.chat_pk = {table}.chat_pk AND t.user_id = {table}.user_id"),
    ):
        # Of two rows of one chat (and voter) for pages that become one, the first stays.
        bind.execute(
            sa.text(
                f"DELETE FROM {table} WHERE page_id IN (SELECT gone FROM page_merges) "  # noqa: S608
                f"AND EXISTS (SELECT 1 FROM {table} t "
                "JOIN page_merges a ON a.gone = t.page_id "
                f"JOIN page_merges b ON b.gone = {table}.page_id "
                f"WHERE {same.format(table=table)} AND a.keep = b.keep "
                f"AND t.page_id < {table}.page_id)"
            )
        )
        bind.execute(
            sa.text(
                f"UPDATE {table} SET page_id = {keep_of.format(table=table)} "  # noqa: S608
                "WHERE page_id IN (SELECT gone FROM page_merges) AND NOT EXISTS "
                f"(SELECT 1 FROM {table} t WHERE {same.format(table=table)} "
                f"AND t.page_id = {keep_of.format(table=table)})"
            )
        )
    bind.execute(
        sa.text(
            f"UPDATE page_events SET page_id = {keep_of.format(table='page_events')} "  # noqa: S608
            "WHERE page_id IN (SELECT gone FROM page_merges)"
        )
    )
    _renumber_messages(bind, merges)
    for table in ("chat_pages", "votes", "page_texts", "page_tags"):
        bind.execute(
            sa.text(f"DELETE FROM {table} WHERE page_id IN (SELECT gone FROM page_merges)")  # noqa: S608
        )
    bind.execute(sa.text("DELETE FROM pages WHERE id IN (SELECT gone FROM page_merges)"))
    bind.execute(sa.text("DROP TABLE page_merges"))


def _renumber_messages(bind: Connection, merges: dict[int, int]) -> None:
    """Messages whose payload lists a merged page (``{"pages": [[ID, updated], …]}``), read
    once."""
    rows = bind.execute(
        sa.text("SELECT id, payload FROM outbox WHERE payload LIKE :pattern"),
        {"pattern": '%"pages"%'},
    )
    renumbered = []
    for message_id, payload in rows:
        try:
            data = json.loads(payload)
        except ValueError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("pages"), list):
            continue
        entries = data["pages"]
        ids = {e[0] for e in entries if isinstance(e, list) and e and isinstance(e[0], int)}
        if not ids & merges.keys():
            continue
        data["pages"] = _renumbered(entries, merges)
        renumbered.append({"p": json.dumps(data, separators=(",", ":")), "i": message_id})
    if renumbered:
        bind.execute(sa.text("UPDATE outbox SET payload = :p WHERE id = :i"), renumbered)


def _renumbered(entries: Iterable[Any], merges: dict[int, int]) -> list[Any]:
    out: list[Any] = []
    seen: set[Any] = set()
    for entry in entries:
        if isinstance(entry, list) and entry and entry[0] in merges:
            entry = [merges[entry[0]], *entry[1:]]
        marker = entry[0] if isinstance(entry, list) and entry else id(entry)
        if marker in seen:
            continue
        seen.add(marker)
        out.append(entry)
    return out


def _rekey(
    bind: Connection, table: str, column: str, found: _Found, *, prefix: str, primary: bool
) -> None:
    """Keys of a former release that named a source as configured: by its public identity
    (a key that exists already wins; the credentialed row goes)."""
    rows = bind.execute(sa.text(f"SELECT {column} FROM {table}")).scalars().all()  # noqa: S608
    existing = set(rows)
    for key in rows:
        if not key.startswith(prefix) or not found.holds(key):
            continue
        new = prefix + found.clean(key[len(prefix) :])
        if primary and new in existing:
            bind.execute(
                sa.text(f"DELETE FROM {table} WHERE {column} = :key"),  # noqa: S608
                {"key": key},
            )
            continue
        existing.add(new)
        bind.execute(
            sa.text(f"UPDATE {table} SET {column} = :new WHERE {column} = :key"),  # noqa: S608
            {"new": new, "key": key},
        )


def _scrub_text(bind: Connection, found: _Found) -> None:
    """Every text column of every table: credentialed URL prefixes lose their user info,
    and each credential left is replaced."""
    inspector = sa.inspect(bind)
    replacements = [*found.prefixes.items()] + [
        (value, REDACTED) for value in sorted(found.values, key=len, reverse=True)
    ]
    for table in inspector.get_table_names():
        if table == "alembic_version":
            continue
        for column in inspector.get_columns(table):
            if not isinstance(column["type"], (sa.String, sa.Text)):
                continue
            name = column["name"]
            for old, new in replacements:
                bind.execute(
                    sa.text(
                        f'UPDATE "{table}" SET "{name}" = REPLACE("{name}", :old, :new) '  # noqa: S608
                        f"WHERE \"{name}\" LIKE :pattern ESCAPE '\\'"
                    ),
                    {"old": old, "new": new, "pattern": f"%{_like(old)}%"},
                )


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def downgrade() -> None:
    """Nothing to undo: the credentials are gone, and the earlier code reads the public
    identities (its next poll of a credentialed feed makes a new source row)."""
