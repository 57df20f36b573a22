#!/usr/bin/env bash
# Regenerates the database of a build that stored a feed's credentials (before revision
# 0005_public_sources), which tests/integration/test_public_sources.py upgrades.
#
#   tests/data/upgrade/make_credentials_dump.sh [BUILD]      (from the project root)
#
# BUILD (default 1d764a6) is unpacked by `git archive` in a temporary folder; its own code
# (PYTHONPATH) runs seed_credentials.py against a SQLite file and a scratch PostgreSQL
# database, dumped with `sqlite3 .dump` and `pg_dump`.
# PostgreSQL: PGURL (default postgres@127.0.0.1:5432), trust authentication.
set -euo pipefail
ROOT=$(git rev-parse --show-toplevel)
HERE="$ROOT/tests/data/upgrade"
PY=${PYTHON:-"$ROOT/.venv/bin/python"}
PGHOST_PORT=${PGURL:-postgres@127.0.0.1:5432}
PGUSER=${PGHOST_PORT%@*}
PGADDR=${PGHOST_PORT#*@}
build=${1:-1d764a6}

work=$(mktemp -d)
mkdir "$work/src"
git -C "$ROOT" archive "$build" | tar -x -C "$work/src"
export PYTHONPATH="$work/src"
scratch="trendbot_dump_credentials_$build"
createdb -h "${PGADDR%:*}" -p "${PGADDR#*:}" -U "$PGUSER" "$scratch"
for url in "sqlite+aiosqlite:///$work/trendbot.db" \
           "postgresql+asyncpg://$PGUSER@$PGADDR/$scratch"; do
    DATABASE_URL="$url" "$PY" "$HERE/seed_credentials.py" >/dev/null 2>&1
done
sqlite3 "$work/trendbot.db" .dump > "$HERE/$build-credentials.sqlite.sql"
pg_dump --inserts --no-owner --no-privileges -h "${PGADDR%:*}" -p "${PGADDR#*:}" -U "$PGUSER" \
    "$scratch" | grep -v '^\\\(un\)\?restrict ' > "$HERE/$build-credentials.postgresql.sql"
dropdb -h "${PGADDR%:*}" -p "${PGADDR#*:}" -U "$PGUSER" "$scratch"
rm -rf "$work"
echo "$build: $HERE/$build-credentials.sqlite.sql $HERE/$build-credentials.postgresql.sql"
