"""The Alembic migrations: ``env.py`` and one revision a file in ``versions/``."""

from pathlib import Path

__all__ = ["MIGRATIONS"]

MIGRATIONS = Path(__file__).parent  # Alembic's script_location
