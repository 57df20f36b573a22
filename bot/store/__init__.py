"""The store: SQLAlchemy tables, the queries of each area, the engine, the Alembic
migrations."""

# Nothing is taken from the package itself: its modules are imported by name.
__all__: list[str] = []
