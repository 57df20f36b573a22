"""The migrations build exactly the models, on both databases: no schema change can skip
its revision."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.engine import head_revision, stamped_revision
from bot.store.migrations import MIGRATIONS
from bot.store.schema import _LEDGER_CLEANUP, metadata
from scripts import adopt_prerelease as prerelease


def schema_differences(sync: Connection) -> list[Any]:
    """Alembic's differences between the database and the models (empty: the same), with
    column types compared, and the ledger's triggers, which the models keep apart."""
    context = MigrationContext.configure(sync, opts={"compare_type": True})
    differences: list[Any] = list(compare_metadata(context, metadata))
    wanted = prerelease.Baseline(metadata, list(_LEDGER_CLEANUP[sync.dialect.name])).defined()
    found = prerelease.live_defined(sync)
    differences += [("missing trigger or function", name) for name in sorted(set(wanted) - found)]
    differences += [("unknown trigger or function", name) for name in sorted(found - set(wanted))]
    differences += [
        ("index defined otherwise", name, shape)
        for table in metadata.sorted_tables
        for name, shape in prerelease.live_indexes(sync, table.name).items()
        if shape != _model_index_shape(sync, table, name)
    ]
    return differences


def _model_index_shape(sync: Connection, table: Any, name: str) -> str | None:
    from sqlalchemy.schema import CreateIndex

    for index in table.indexes:
        if index.name == name:
            return prerelease.index_shape(str(CreateIndex(index).compile(dialect=sync.dialect)))
    return None


async def test_the_migrated_schema_is_the_models(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        assert await conn.run_sync(schema_differences) == []
    assert await stamped_revision(engine) == head_revision()


async def test_a_model_change_without_its_revision_is_found(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("DROP INDEX ix_outbox_ready"))
        await conn.execute(text("CREATE INDEX ix_outbox_ready ON outbox (status, not_before)"))
        await conn.execute(text("ALTER TABLE chats ADD COLUMN nickname VARCHAR(20)"))
        differences = await conn.run_sync(schema_differences)
    assert ("index defined otherwise", "ix_outbox_ready", "(status, not_before)") in differences
    assert any(d[0] == "remove_column" and d[3].name == "nickname" for d in differences)


def test_the_baseline_is_spelled_out() -> None:
    path = next((MIGRATIONS / "versions").glob(f"{prerelease.BASELINE}*.py"))
    code = path.read_text().split('"""', 2)[2]  # the code, not its docstring
    assert "create_all" not in code
    assert "import bot" not in code and "from bot" not in code
    later = sum(
        other.read_text().count("op.create_table(")
        for other in (MIGRATIONS / "versions").glob("0*.py")
        if other != path
    )
    assert code.count("op.create_table(") + later == len(metadata.tables)


def test_the_recorded_baseline_is_the_models_today() -> None:
    # While no revision follows the baseline, the models are the baseline.
    if head_revision() != prerelease.BASELINE:
        return
    for dialect in ("sqlite", "postgresql"):
        recorded = prerelease.baseline(dialect)
        assert sorted(recorded.metadata.tables) == sorted(metadata.tables)
        assert recorded.statements == _LEDGER_CLEANUP[dialect]
