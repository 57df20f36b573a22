#!/usr/bin/env bash
# Regenerates the databases of earlier builds that tests/integration/test_upgrade.py upgrades.
#
#   tests/data/upgrade/make_dumps.sh [BUILD...]      (from the project root, after make install)
#
# For each build: a checkout of that commit (git worktree, removed after), whose own code
# (PYTHONPATH) creates a SQLite file and a scratch PostgreSQL database with seed.py and its
# own CLI (`poll --backfill`, `digest --now` against a Telegram that cannot be reached, so
# the messages stay queued), dumped with `sqlite3 .dump` and `pg_dump`.
# PostgreSQL: PGURL (default postgres@127.0.0.1:5432), trust authentication.
set -euo pipefail
ROOT=$(git rev-parse --show-toplevel)
HERE="$ROOT/tests/data/upgrade"
PY="$ROOT/.venv/bin/python"
PGHOST_PORT=${PGURL:-postgres@127.0.0.1:5432}
PGUSER=${PGHOST_PORT%@*}
PGADDR=${PGHOST_PORT#*@}
BUILDS=("$@")
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=(1a7c8e9 f76b35d 831c0a4 d9caa29 5c873bc 1d764a6)

for build in "${BUILDS[@]}"; do
    work=$(mktemp -d)
    git -C "$ROOT" worktree add --detach "$work/src" "$build" >/dev/null
    wiki="$work/src/examples/wiki"  # where the sample wiki was; later in the package
    [ -d "$wiki" ] || wiki="$work/src/bot/sample_wiki"
    export PYTHONPATH="$work/src" WIKI_SOURCES="$wiki"
    export TELEGRAM_BOT_TOKEN=123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345678
    export TELEGRAM_API_BASE_URL=http://127.0.0.1:9/bot  # nothing listens: sends stay queued
    scratch="trendbot_dump_$build"
    createdb -h "${PGADDR%:*}" -p "${PGADDR#*:}" -U "$PGUSER" "$scratch"
    for url in "sqlite+aiosqlite:///$work/trendbot.db" \
               "postgresql+asyncpg://$PGUSER@$PGADDR/$scratch"; do
        export DATABASE_URL="$url"
        (cd "$work" && "$PY" "$HERE/seed.py" && "$PY" -m bot poll --backfill 3650 \
            && "$PY" -m bot digest --now) >/dev/null 2>&1
    done
    sqlite3 "$work/trendbot.db" .dump > "$HERE/$build.sqlite.sql"
    pg_dump --inserts --no-owner --no-privileges -h "${PGADDR%:*}" -p "${PGADDR#*:}" -U "$PGUSER" \
        "$scratch" | grep -v '^\\\(un\)\?restrict ' > "$HERE/$build.postgresql.sql"
    dropdb -h "${PGADDR%:*}" -p "${PGADDR#*:}" -U "$PGUSER" "$scratch"
    git -C "$ROOT" worktree remove --force "$work/src"
    rm -rf "$work"
    echo "$build: $HERE/$build.sqlite.sql $HERE/$build.postgresql.sql"
done
