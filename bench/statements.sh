#!/usr/bin/env bash
# Counts the SQL statements one scheduled message costs end to end (accepted,
# dispatched, confirmed, received, read), on this machine's PostgreSQL, with and
# without a webhook subscribed to every message event. It turns on log_statement
# for a scratch database only and reads PostgreSQL's log file.
#
#   bash bench/statements.sh            (needs psql, a local PostgreSQL and Redis)
set -euo pipefail
cd "$(dirname "$0")/.."
PGLOG=${PGLOG:-$(ls /var/log/postgresql/postgresql-*-main.log | head -n1)}
DB=sb_statements
ADDR=127.0.0.1:39997
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable" REDIS_URL="redis://127.0.0.1:6379/12"
psql() { command psql -h 127.0.0.1 -U postgres -d test -qAt "$@"; }
bin=$(mktemp -d)/switchboard
go build -o "$bin" ./cmd/switchboard
psql -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
redis-cli -n 12 flushdb >/dev/null
"$bin" migrate 2>/dev/null
KEY=$("$bin" keys create --workspace default --scopes '*')
psql -c "ALTER DATABASE $DB SET log_statement = 'all'"
SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true "$bin" serve --addr $ADDR --log-level warn --sandbox-ack-delay 200ms --rate-limit off >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; psql -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT
until curl -s $ADDR/healthz >/dev/null; do sleep 0.05; done
send() { curl -s -X POST "$ADDR/v1/scheduled-messages/$1" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '{"type":"text","text":"count me"}' >/dev/null; }
# window runs $1 then waits 2 s, and prints the statements and commits logged.
window() {
  local from; from=$(wc -l <"$PGLOG")
  "$@"; sleep 2
  local lines; lines=$(tail -n +"$from" "$PGLOG" | grep "@$DB " | grep "LOG:  \(statement\|execute\)" || true)
  echo "$(grep -c . <<<"$lines") $(grep -ci ": commit" <<<"$lines")"
}
count() { # $1: label, $2: recipient
  send +15550009998; sleep 2               # warm: caches and connections
  read -r idle idleCommits < <(window true) # the loops' polling alone
  read -r busy busyCommits < <(window send "$2")
  echo "$1: $busy statements ($busyCommits commits) in the 2 s of one message's life; $idle ($idleCommits) in 2 idle s"
}
count "no webhook" +15550001235
curl -s -X POST $ADDR/v1/webhooks -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d '{"url":"http://127.0.0.1:9/hook","events":["message.queued","message.sending","message.delivered","message.read","ack_changed_webhook"]}' >/dev/null
count "a webhook on every message event" +15550001236
