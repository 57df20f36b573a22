"""The Alembic revisions, one a file."""

# Nothing is taken from the package itself: its modules are imported by name.
__all__: list[str] = []
