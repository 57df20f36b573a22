"""Bring a database made before the first release to the baseline revision, once.

``python scripts/adopt_prerelease.py DATABASE_URL`` (from a checkout of the project, with
the project installed), then ``trendbot db upgrade``. The bot itself refuses such a
database with one line naming this script (``bot.store.engine.PRERELEASE_REFUSAL``): the
adoption is done once per deployment, so it lives here, outside the package and its start.

Before the first release the only migration, ``0001``, ran ``create_all`` of the schema of
its day, and a database once stamped ``0001`` was never touched again while the schema grew
(columns of ``chats``, new tables, a new definition of ``ix_outbox_ready``). Such a database
is recognised by its stamp (or, with no stamp at all, by its ``chats`` table) and compared
with the baseline: what it lacks is added (tables, columns with the value new rows get,
indexes, triggers), an index defined otherwise is built again, and it is stamped with the
baseline. Rows are never rewritten or dropped. What cannot be brought over that way (a
column of another type, a missing constraint, a column or table the baseline does not know)
is refused with one line before anything changes, and the whole adoption is one
transaction on both databases. A SQLite file is first copied beside itself, as
``trendbot db upgrade`` does; on PostgreSQL the script says to back up with pg_dump.

The baseline is read from its revision file, by running its operations against a recorder
instead of a database, so that this script keeps working when later revisions change the
models.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import Column, Index, MetaData, Table, UniqueConstraint, inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateIndex
from sqlalchemy.sql.expression import Executable

from bot.errors import BotError, SchemaError
from bot.store import backup
from bot.store.engine import (
    PG_MIGRATION_LOCK,
    PRERELEASE_REVISION,
    create_engine,
    stamped_revision,
)
from bot.store.migrations import MIGRATIONS

PRERELEASE = PRERELEASE_REVISION
BASELINE = "0002_baseline"
UPGRADE_HELP = "see docs/operating.md, 'Upgrading': export, a new database, import"

# For a NOT NULL column an earlier build lacked: the value its rows get, the one the models
# give a new row. A NOT NULL column without an entry here is refused.
FILL_VALUES: dict[tuple[str, str], str] = {("chats", "weekday"): "0"}
_DEFINED_NAME = re.compile(r"CREATE\s+(?:TRIGGER|FUNCTION)\s+(\w+)", re.IGNORECASE)


@dataclass(slots=True)
class Baseline:
    """The baseline's tables (with their indexes) and trigger statements, by dialect."""

    metadata: MetaData
    statements: list[str] = field(default_factory=list)

    def defined(self) -> dict[str, str]:
        """Each trigger's or function's name, and the statement that creates it."""
        named = {}
        for statement in self.statements:
            found = _DEFINED_NAME.search(statement)
            if found:
                named[found[1]] = statement
        return named


def baseline(dialect_name: str) -> Baseline:
    """The baseline revision's schema for ``dialect_name``, recorded from its operations.

    The revision runs in Alembic's offline mode, whose implementation is told to record
    each table, index and statement here instead of writing SQL.
    """
    context = MigrationContext.configure(
        dialect_name=dialect_name, opts={"as_sql": True, "output_buffer": io.StringIO()}
    )
    recorded = Baseline(metadata=MetaData())

    def create_table(table: Table, **_kw: Any) -> None:
        table.to_metadata(recorded.metadata)

    def create_index(index: Index, **_kw: Any) -> None:
        assert index.table is not None
        table = recorded.metadata.tables[index.table.name]
        # A column by name; a textual element (``priority DESC``) as its text.
        elements = [
            table.c[e.name] if isinstance(e, Column) else getattr(e, "text", e)
            for e in index.expressions
        ]
        Index(index.name, *elements, unique=index.unique, _table=table)

    def execute(sql: Any, *_args: Any, **_kw: Any) -> None:
        recorded.statements.append(str(sql))

    impl: Any = context.impl
    impl.create_table, impl.create_index, impl.execute = create_table, create_index, execute
    module = _baseline_module()
    with Operations.context(context):
        module.upgrade()
    return recorded


def _baseline_module() -> Any:
    path = next((MIGRATIONS / "versions").glob(f"{BASELINE}*.py"))
    spec = importlib.util.spec_from_file_location(f"trendbot_revision_{BASELINE}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def is_prerelease(conn: Connection) -> bool:
    """Whether the database on ``conn`` was made before the first release: stamped ``0001``,
    or with the bot's tables and no stamp at all."""
    if conn.dialect.has_table(conn, "alembic_version"):
        row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
        if row is not None:
            return str(row[0]) == PRERELEASE
    return bool(conn.dialect.has_table(conn, "chats"))


def adopt(conn: Connection) -> list[str]:
    """Bring the pre-release database on ``conn`` to the baseline and stamp it.

    Runs inside the caller's transaction. Returns what was changed, one item a change.

    Raises:
        SchemaError: the database cannot be brought to the baseline safely; nothing changed.
    """
    reference = baseline(conn.dialect.name)
    plan = _plan(conn, reference)
    for step in plan:
        step.run(conn)
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL, "
        "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
    )
    conn.exec_driver_sql("DELETE FROM alembic_version")
    conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": BASELINE})
    return [step.describe for step in plan]


@dataclass(frozen=True, slots=True)
class _Step:
    describe: str
    statements: tuple[Any, ...]

    def run(self, conn: Connection) -> None:
        for statement in self.statements:
            if isinstance(statement, str):
                conn.exec_driver_sql(statement)
            elif isinstance(statement, Executable):
                conn.execute(statement)
            else:
                statement(conn)


def _refuse(what: str) -> SchemaError:
    return SchemaError(f"the database cannot be upgraded in place: {what}; {UPGRADE_HELP}")


def _plan(conn: Connection, reference: Baseline) -> list[_Step]:
    """Every change that brings the database to ``reference``; refuses before any is made."""
    inspector = inspect(conn)
    live_tables = set(inspector.get_table_names()) - {"alembic_version"}
    wanted = reference.metadata.tables
    unknown = sorted(live_tables - set(wanted))
    if unknown:
        raise _refuse(f"table {unknown[0]} is not part of this build's schema")
    steps: list[_Step] = []
    for table in reference.metadata.sorted_tables:
        if table.name not in live_tables:
            steps.append(_Step(f"table {table.name} created", (table.create,)))
            continue
        steps.extend(_column_steps(conn, inspector, table))
        _check_constraints(inspector, table)
        steps.extend(_index_steps(conn, table))
    present = live_defined(conn)
    for name, statement in reference.defined().items():
        if name not in present:
            steps.append(_Step(f"trigger {name} created", (statement,)))
    return steps


def _column_steps(conn: Connection, inspector: Any, table: Table) -> list[_Step]:
    dialect = conn.dialect
    live = {c["name"]: c for c in inspector.get_columns(table.name)}
    extra = sorted(set(live) - set(table.c.keys()))
    if extra:
        raise _refuse(f"column {table.name}.{extra[0]} is not part of this build's schema")
    steps = []
    for column in table.c:
        found = live.get(column.name)
        wanted_type = _type_name(column.type, dialect)
        if found is None:
            steps.append(_add_column(conn, table, column))
            continue
        if _type_name(found["type"], dialect) != wanted_type:
            raise _refuse(
                f"column {table.name}.{column.name} is "
                f"{_type_name(found['type'], dialect)}, this build's is {wanted_type}"
            )
        if bool(found["nullable"]) != bool(column.nullable) and not column.primary_key:
            raise _refuse(f"column {table.name}.{column.name} differs in NOT NULL")
    return steps


def _type_name(type_: Any, dialect: Any) -> str:
    return str(type_.compile(dialect=dialect)).upper().replace(" ", "")


def _add_column(conn: Connection, table: Table, column: Column[Any]) -> _Step:
    quote = conn.dialect.identifier_preparer.quote
    type_name = column.type.compile(dialect=conn.dialect)
    name = f"{quote(table.name)} ADD COLUMN {quote(column.name)} {type_name}"
    if column.nullable:
        return _Step(f"column {table.name}.{column.name} added", (f"ALTER TABLE {name}",))
    fill = FILL_VALUES.get((table.name, column.name))
    if fill is None:
        raise _refuse(f"column {table.name}.{column.name} is missing and has no value to fill")
    statements: list[str] = [f"ALTER TABLE {name} NOT NULL DEFAULT {fill}"]
    if conn.dialect.name == "postgresql":  # the baseline has no server default
        statements.append(
            f"ALTER TABLE {quote(table.name)} ALTER COLUMN {quote(column.name)} DROP DEFAULT"
        )
    # SQLite cannot drop a column's default without copying the table; the default is the
    # value every insert of the code gives anyway.
    return _Step(
        f"column {table.name}.{column.name} added, {fill} in the rows already there",
        tuple(statements),
    )


def _check_constraints(inspector: Any, table: Table) -> None:
    """The primary key, unique constraints and foreign keys must already be the baseline's:
    changing them means copying the table, which an upgrade in place does not do."""
    primary = tuple(inspector.get_pk_constraint(table.name)["constrained_columns"])
    if primary != tuple(c.name for c in table.primary_key.columns):
        raise _refuse(f"the primary key of {table.name} differs")
    live_unique = {tuple(u["column_names"]) for u in inspector.get_unique_constraints(table.name)}
    wanted_unique = {
        tuple(c.name for c in constraint.columns)
        for constraint in table.constraints
        if isinstance(constraint, UniqueConstraint)
    }
    if live_unique != wanted_unique:
        raise _refuse(f"the unique constraints of {table.name} differ")
    live_keys = {
        (
            tuple(fk["constrained_columns"]),
            fk["referred_table"],
            tuple(fk["referred_columns"]),
            (fk.get("options", {}).get("ondelete") or "").upper(),
        )
        for fk in inspector.get_foreign_keys(table.name)
    }
    wanted_keys = {
        (
            tuple(c.name for c in fk.columns),
            fk.referred_table.name,
            tuple(e.column.name for e in fk.elements),
            (fk.ondelete or "").upper(),
        )
        for fk in table.foreign_key_constraints
    }
    if live_keys != wanted_keys:
        raise _refuse(f"the foreign keys of {table.name} differ")


def _index_steps(conn: Connection, table: Table) -> list[_Step]:
    live = live_indexes(conn, table.name)
    wanted = {str(index.name): index for index in table.indexes}
    steps = []
    quote = conn.dialect.identifier_preparer.quote
    for name, index in wanted.items():
        definition = index_shape(str(CreateIndex(index).compile(dialect=conn.dialect)))
        if name not in live:
            steps.append(_Step(f"index {name} created", (CreateIndex(index),)))
        elif live[name] != definition:
            steps.append(
                _Step(
                    f"index {name} built again on {definition}",
                    (f"DROP INDEX {quote(name)}", CreateIndex(index)),
                )
            )
    for name in sorted(set(live) - set(wanted)):
        steps.append(_Step(f"index {name} dropped", (f"DROP INDEX {quote(name)}",)))
    return steps


def index_shape(definition: str) -> str:
    """What makes two index definitions the same: unique or not, and the column list."""
    unique = "UNIQUE " if re.match(r"\s*CREATE\s+UNIQUE", definition, re.IGNORECASE) else ""
    columns = definition[definition.index("(") :]
    return unique + re.sub(r"\s+", " ", columns.replace('"', "")).strip().lower()


def live_indexes(conn: Connection, table_name: str) -> dict[str, str]:
    """The table's indexes that back no constraint, by name, as :func:`index_shape`."""
    if conn.dialect.name == "sqlite":
        rows = conn.execute(
            text(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = :t "
                "AND sql IS NOT NULL"
            ),
            {"t": table_name},
        ).all()
    else:
        rows = conn.execute(
            text(
                "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x "
                "JOIN pg_class i ON i.oid = x.indexrelid "
                "JOIN pg_class t ON t.oid = x.indrelid "
                "JOIN pg_namespace n ON n.oid = t.relnamespace "
                "WHERE t.relname = :t AND n.nspname = current_schema() "
                "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)"
            ),
            {"t": table_name},
        ).all()
    return {str(name): index_shape(str(sql)) for name, sql in rows}


def live_defined(conn: Connection) -> set[str]:
    """The names of the database's triggers (and, on PostgreSQL, functions)."""
    if conn.dialect.name == "sqlite":
        rows = conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'")).all()
    else:
        rows = conn.execute(
            text(
                "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE NOT t.tgisinternal AND n.nspname = current_schema() "
                "UNION SELECT p.proname FROM pg_proc p "
                "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()"
            )
        ).all()
    return {str(row[0]) for row in rows}


async def adopt_database(url: str) -> int:
    """Adopt the database at ``url``, saying what was done; the exit status."""
    engine = create_engine(url)
    try:
        stamped = await stamped_revision(engine)
        async with engine.connect() as conn:
            found = await conn.run_sync(is_prerelease)
        if not found:
            print(
                f"not a database from before the first release (at {stamped or 'no revision'}): "
                "nothing to adopt; trendbot db upgrade brings it up to date"
            )
            return 0
        source = backup.sqlite_file(url)
        if source is not None:
            kept = await asyncio.to_thread(
                backup.keep_before_upgrade, source, revision=stamped or PRERELEASE
            )
            print(f"backup of the database before the upgrade: {kept}")
        else:
            print(
                f"migrating the PostgreSQL database from {stamped or 'no revision'} to "
                f"{BASELINE} without a copy: back up with pg_dump first "
                f"(see {backup.PG_BACKUP_DOCS})"
            )
        async with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execute(text(f"SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK})"))
            # Read again under the lock: another run may have adopted it meanwhile.
            changes = await conn.run_sync(lambda sync: adopt(sync) if is_prerelease(sync) else [])
    except SchemaError as exc:
        print(f"adopt_prerelease: {exc.reason}", file=sys.stderr)
        return 2
    except BotError as exc:  # the copy could not be made: nothing was changed
        print(f"adopt_prerelease: {exc}", file=sys.stderr)
        return 1
    finally:
        await engine.dispose()
    print(f"adopted as {BASELINE}: {'; '.join(changes) or 'nothing was missing'}")
    print("now run: trendbot db upgrade")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="adopt_prerelease.py",
        description="Bring a database made before the first release to the baseline revision.",
    )
    parser.add_argument(
        "database_url",
        nargs="?",
        default=os.environ.get("DATABASE_URL"),
        help="the SQLAlchemy URL of the database (default: $DATABASE_URL)",
    )
    args = parser.parse_args(argv)
    if not args.database_url:
        parser.error("name the database: DATABASE_URL as an argument or in the environment")
    return asyncio.run(adopt_database(args.database_url))


if __name__ == "__main__":
    sys.exit(main())
