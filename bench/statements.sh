#!/usr/bin/env bash
# Counts the SQL statements scheduled messages cost end to end (accepted,
# dispatched, confirmed, received, read), on this machine's PostgreSQL, with and
# without a webhook subscribed to every message event. It turns on log_statement
# for a scratch database only and reads PostgreSQL's log file.
#
#   bash bench/statements.sh            (needs psql, python3, a local PostgreSQL and Redis)
#
# For each case (no-webhook, webhook) it prints three lines, one a window:
#
#   message <case>: S statements, C commits (one message's life, 2 s)
#   idle <case>: S statements, C commits (2 s)
#   burst <case>: S statements, C commits per message (N messages by 8 clients: ...)
#
# The burst's window runs from the first send until every message of the burst is
# read and what that recorded is applied, fanned out and attempted (polled, with
# a timeout); it counts whatever the server did meanwhile, loops included.
# Environment: STATEMENTS_DB (sb_statements), STATEMENTS_REDIS_DB (12),
# STATEMENTS_ADDR (127.0.0.1:39997), STATEMENTS_HOOK_ADDR (the webhook's receiver,
# 127.0.0.1:39998), STATEMENTS_BURST (100 messages),
# STATEMENTS_CLIENTS (8), STATEMENTS_BIN (a built switchboard; default: build
# one), PGLOG (PostgreSQL's log file).
set -euo pipefail
cd "$(dirname "$0")/.."
PGLOG=${PGLOG:-$(ls /var/log/postgresql/postgresql-*-main.log | head -n1)}
DB=${STATEMENTS_DB:-sb_statements}
REDIS_DB=${STATEMENTS_REDIS_DB:-12}
ADDR=${STATEMENTS_ADDR:-127.0.0.1:39997}
HOOK_ADDR=${STATEMENTS_HOOK_ADDR:-127.0.0.1:39998}
BURST=${STATEMENTS_BURST:-100}
CLIENTS=${STATEMENTS_CLIENTS:-8}
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable" REDIS_URL="redis://127.0.0.1:6379/$REDIS_DB"
psql() { PGOPTIONS="-c client_min_messages=warning" command psql -h 127.0.0.1 -U postgres -d test -qAt "$@"; }
# query asks the scratch database, with its own statements left out of the log.
query() { PGOPTIONS="-c log_statement=none" command psql -h 127.0.0.1 -U postgres -d "$DB" -qAt -c "$1"; }
bin=${STATEMENTS_BIN:-}
if [ -z "$bin" ]; then bin=$(mktemp -d)/switchboard; go build -o "$bin" ./cmd/switchboard; fi
psql -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
redis-cli -n "$REDIS_DB" flushdb >/dev/null
"$bin" migrate 2>/dev/null
KEY=$("$bin" keys create --workspace default --scopes '*')
psql -c "ALTER DATABASE $DB SET log_statement = 'all'"
SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true "$bin" serve --addr "$ADDR" --log-level warn --sandbox-ack-delay 200ms --rate-limit off >/dev/null 2>&1 &
pid=$!
# The webhook's receiver answers every POST with 204: one that refused them would
# have the webhook disabled after 8 failures, and the burst would deliver nothing.
python3 -c '
import http.server, sys
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
' "${HOOK_ADDR##*:}" &
hook=$!
trap 'kill $pid $hook 2>/dev/null; wait $pid $hook 2>/dev/null || true; psql -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT
until curl -s "$ADDR/healthz" >/dev/null; do sleep 0.05; done
# send schedules a text to $1 now, marked with the secret $2.
send() {
	curl -s -X POST "$ADDR/v1/scheduled-messages/$1" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
		-d "{\"type\":\"text\",\"text\":\"count me\"${2:+,\"secret\":\"$2\"}}" >/dev/null
}
export -f send
export ADDR KEY
# logged prints the statements and commits logged for the scratch database from line $1 of the log on.
logged() {
	local lines; lines=$(tail -n +"$1" "$PGLOG" | grep "@$DB " | grep "LOG:  \(statement\|execute\)" || true)
	echo "$(grep -c . <<<"$lines") $(grep -ci ": commit" <<<"$lines")"
}
# window runs $1 then waits 2 s, and prints the statements and commits logged.
window() {
	local from; from=$(wc -l <"$PGLOG")
	"$@"; sleep 2
	logged "$from"
}
# settled says whether the $2 messages marked $1 are read and nothing they caused
# is left to do: engine events to apply, acks to come, events to fan out,
# deliveries to try.
settled() {
	[ "$(query "SELECT (SELECT count(*) FROM messages WHERE secret = '$1' AND read_at IS NOT NULL) = $2
		AND NOT EXISTS (SELECT FROM inbox_events WHERE applied_at IS NULL AND dead_at IS NULL)
		AND NOT EXISTS (SELECT FROM sandbox_events)
		AND NOT EXISTS (SELECT FROM events WHERE fanned_out_at IS NULL)
		AND NOT EXISTS (SELECT FROM deliveries WHERE attempts = 0)")" = t ]
}
# settle waits (60 s at most) till the $2 messages marked $1 are settled.
settle() {
	local start=$SECONDS
	until settled "$1" "$2"; do
		if ((SECONDS - start > 60)); then echo "statements.sh: $1 not settled after 60 s" >&2; return; fi
		sleep 0.1
	done
}
# burst sends BURST messages from CLIENTS concurrent clients to numbers +1555<$1>nnnn
# marked with the secret burst-$1, waits till they are settled, and prints the
# statements and commits logged and the window's seconds.
burst() {
	local from start; from=$(wc -l <"$PGLOG"); start=$(date +%s.%N)
	seq -f "+1555$1%04g" 1 "$BURST" | xargs -P "$CLIENTS" -I{} bash -c "send {} burst-$1"
	settle "burst-$1" "$BURST"
	echo "$(logged "$from") $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
}
count() { # $1: the case, $2: the single message's recipient, $3: the burst's number prefix (3 digits)
	send +15550009998 "warm-$3"; settle "warm-$3" 1; sleep 0.5 # warm: caches and connections
	read -r idle idleCommits < <(window true) # the loops' polling alone
	read -r busy busyCommits < <(window send "$2")
	read -r all allCommits took < <(burst "$3")
	echo "message $1: $busy statements, $busyCommits commits (one message's life, 2 s)"
	echo "idle $1: $idle statements, $idleCommits commits (2 s)"
	awk -v c="$1" -v s="$all" -v k="$allCommits" -v n="$BURST" -v p="$CLIENTS" -v t="$took" 'BEGIN {
		printf "burst %s: %.1f statements, %.1f commits per message (%d messages by %d clients: %d and %d in %s s)\n", c, s / n, k / n, n, p, s, k, t }'
}
count no-webhook +15550001235 201
curl -s -X POST "$ADDR/v1/webhooks" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
	-d '{"url":"http://'"$HOOK_ADDR"'/hook","events":["message.queued","message.sending","message.delivered","message.read","ack_changed_webhook"]}' >/dev/null
count webhook +15550001236 202
failed=$(query "SELECT count(*) FROM deliveries WHERE status <> 'succeeded'")
[ "$failed" = 0 ] || echo "statements.sh: $failed webhook deliveries did not succeed" >&2
