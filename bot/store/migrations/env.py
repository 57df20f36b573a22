"""Alembic environment: runs on the connection handed over by ``bot.store.engine``."""

from alembic import context

from bot.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
