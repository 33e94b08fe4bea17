# Switchboard. `make run` serves on the embedded default (SQLite + in-process Redis +
# sandbox engine); `make test` runs every test (add TEST_DATABASE_URL / TEST_REDIS_URL
# to run them against PostgreSQL and Redis as well).
GO    ?= go
# The race detector needs cgo and a C compiler; without them the tests run without it.
RACE  ?= $(shell [ "$$($(GO) env CGO_ENABLED)" = "1" ] && command -v cc >/dev/null 2>&1 && echo -race)
# ADDR overrides SWITCHBOARD_ADDR (default 127.0.0.1:8080).
ADDR  ?=

.PHONY: run test checkptr faults generate lint build bench bench-conversations bench-ratelimit bench-campaign bench-media bench-sessions

# VERSION and REVISION are stamped into the binary (`switchboard version`).
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
# -s -w drop the symbol table and DWARF (a third of the binary); panics still print
# their stack with file and line.
LDFLAGS  ?= -s -w -X main.version=$(VERSION) -X main.revision=$(REVISION)

# Builds first (the first build compiles every dependency: a few minutes), then runs
# the binary itself, so that Ctrl-C reaches the server alone, which exits 0.
run:
	@echo "building bin/switchboard (the first build takes a few minutes)…"
	@$(GO) build -ldflags "$(LDFLAGS)" -o bin/switchboard ./cmd/switchboard
	@exec ./bin/switchboard serve $(if $(ADDR),--addr $(ADDR))

test:
	$(GO) test $(RACE) -count=1 -timeout 20m ./...

# The MP3 encoder (shine-mp3) walks its input with unsafe pointers: its tests under
# checkptr (which -race turns on as well).
checkptr:
	$(GO) test -count=1 -gcflags=all=-d=checkptr ./music/

# The fault-injection suite: real processes on PostgreSQL and Redis (set
# TEST_DATABASE_URL and TEST_REDIS_URL), killed and cut off during 1,600 sends.
faults:
	$(GO) test -tags faults -count=1 -v -timeout 20m ./faults

generate:
	$(GO) generate .

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/switchboard ./cmd/switchboard

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./bench/

# The conversation reads on 10,000 chats x 100 messages in PostgreSQL (its own
# database bench_convo on TEST_DATABASE_URL's server): p50/p99 and query plans.
bench-conversations:
	$(GO) run ./bench/conversations

# The per-key rate limit under load: no 429 below the limit, the limit's count
# of 200s above it, and correct X-RateLimit-* and Retry-After headers.
bench-ratelimit:
	$(GO) run ./bench/ratelimit

# A 10,000-contact campaign with pacing 0 on PostgreSQL and Redis (its own database
# bench_campaign on TEST_DATABASE_URL's server; TEST_REDIS_URL's database is
# flushed): time to completion, peak RSS and the final counters.
bench-campaign:
	$(GO) run ./bench/campaign

# A 64 MiB video sent through the gateway engine (simulated network) from the
# media store and from an HTTP URL, each in a process of its own: peak RSS
# (target < 100 MB). Needs ffmpeg.
bench-media:
	$(GO) run -tags mediabench ./bench/media -mb 64

# 300 gateway sessions (simulated network) on 3 replicas in one process, one
# database and one Redis: RSS per session (target <= 5 MB beyond idle),
# placement balance, and fail-over time with one replica cut off from Redis.
bench-sessions:
	$(GO) run -tags sessionbench ./bench/sessions
