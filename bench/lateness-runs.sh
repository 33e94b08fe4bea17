#!/usr/bin/env bash
# Runs bench/compare's lateness row RUNS times in a row (default 5: 100,000
# messages due over one minute) and prints each run's p50/p99 beside what could
# make a later run slower than an earlier one: PostgreSQL's checkpoints, its
# autovacuum setting and its database sizes, Redis's memory and keys.
#
#   bash bench/lateness-runs.sh            (needs psql, a local PostgreSQL and Redis)
#   RUNS=3 N=20000 SPREAD=20s bash bench/lateness-runs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5} N=${N:-100000} SPREAD=${SPREAD:-60s} LEAD=${LEAD:-150s}
REDIS=${REDIS:-redis://127.0.0.1:6379/10}
psql() { command psql -h 127.0.0.1 -U postgres -d test -qAt "$@"; }
bin=$(mktemp -d)/compare
go build -o "$bin" ./bench/compare
echo "PostgreSQL: autovacuum $(psql -c 'SHOW autovacuum'), shared_buffers $(psql -c 'SHOW shared_buffers'), max_wal_size $(psql -c 'SHOW max_wal_size')"
checkpoints() { psql -c "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"; }
for run in $(seq 1 "$RUNS"); do
  before=$(checkpoints)
  start=$(date +%s)
  line=$("$bin" -only lateness -late "$N" -spread "$SPREAD" -lead "$LEAD" -redis "$REDIS" 2>&1 | grep -E '^lateness|lead time' || true)
  echo "run $run ($(( $(date +%s) - start )) s): ${line:-no lateness line}"
  echo "   checkpoints during the run: $(( $(checkpoints) - before )); databases: $(psql -c "SELECT count(*) || ' of ' || pg_size_pretty(sum(pg_database_size(datname))) FROM pg_database")"
  echo "   redis: $(redis-cli info memory | grep -E '^used_memory_human' | tr -d '\r'), keys $(redis-cli info keyspace | grep -v '^#' | tr -d '\r' | tr '\n' ' ')"
done
