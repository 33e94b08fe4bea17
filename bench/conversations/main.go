// Command conversations measures the conversation reads on a large message store
// in PostgreSQL: it creates its own database (bench_convo by default, dropped at
// the end unless -keep), seeds one workspace with -chats chats of -messages
// messages each by COPY, then sends each measured request -n times through the
// real router (an httptest server over app.New, embedded Redis, no engine) and
// prints p50/p99/max. Last, it sends each request once more through a router
// whose ent driver records the SQL it runs, and prints the EXPLAIN (ANALYZE,
// BUFFERS) plan of every statement.
//
//	go run ./bench/conversations                        (10,000 chats x 100 messages)
//	go run ./bench/conversations -chats 1000 -n 50      (a quick look)
//
// The server is TEST_DATABASE_URL (or -database-url): the benchmark only uses it
// to create and drop its own database.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/rest"
)

func main() {
	base := flag.String("database-url", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL server to create the benchmark database on")
	name := flag.String("db", "bench_convo", "name of the benchmark database (dropped and created)")
	chats := flag.Int("chats", 10000, "chats in the workspace")
	perChat := flag.Int("messages", 100, "messages per chat")
	n := flag.Int("n", 200, "measured requests per case (after 10 warm-up ones)")
	keep := flag.Bool("keep", false, "keep the database afterwards")
	reuse := flag.Bool("reuse", false, "reuse the database a run with -keep left (same -chats and -messages) instead of seeding it again")
	plans := flag.Bool("plans", true, "print the EXPLAIN ANALYZE plans of the SQL of each case")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the measured requests to this file")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()

	dbURL := databaseURL(*base, *name)
	if !*reuse {
		createDatabase(ctx, *base, *name)
	}
	if !*keep {
		defer dropDatabase(*base, *name)
	}
	a, err := app.New(ctx, app.Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, Role: app.RoleAPI,
		SandboxWorkspaces: []string{"nobody"}, DataDir: os.TempDir() + "/bench_convo",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	check(err)
	defer a.Close()
	issued, err := auth.CreateKey(ctx, a.Client, "bench", []string{"*"}, "bench")
	check(err)
	ws := issued.Record.WorkspaceID

	var jids []string
	if *reuse {
		jids = seeded(ctx, dbURL, ws)
		fmt.Printf("reused %d chats\n", len(jids))
	} else {
		t0 := time.Now()
		jids = seed(ctx, dbURL, ws, *chats, *perChat)
		fmt.Printf("seeded %d chats x %d messages in %s\n", *chats, *perChat, time.Since(t0).Round(time.Millisecond))
	}

	srv := httptest.NewServer(a.Handler)
	defer srv.Close()
	cases := casesOf(jids)
	if *profile != "" {
		f, err := os.Create(*profile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	measure(srv, issued.Key, cases, *n)
	if *profile != "" {
		pprof.StopCPUProfile()
	}
	if *plans {
		printPlans(ctx, a, dbURL, issued.Key, cases)
	}
}

// benchCase is one measured request: its name and a path for each run.
type benchCase struct {
	name string
	path func() string
}

// casesOf are the measured requests over the chats jids.
func casesOf(jids []string) []benchCase {
	since := time.Now().Add(-30 * 24 * time.Hour).UTC().Format(time.RFC3339)
	rng := rand.New(rand.NewPCG(1, 2))
	return []benchCase{
		{"latest-chats 200 x 100", func() string { return "/v1/latest-chats?numberOfChats=200&numberOfMessages=100" }},
		{"latest-chats default (50 x 20)", func() string { return "/v1/latest-chats" }},
		{"messages chatId+messageTypes+since", func() string {
			return "/v1/messages?chatId=" + url.QueryEscape(jids[rng.IntN(len(jids))]) + "&messageTypes=chat,image&since=" + since
		}},
		{"messages chatId+searchToken", func() string {
			return "/v1/messages?chatId=" + url.QueryEscape(jids[rng.IntN(len(jids))]) + "&searchToken=invoice"
		}},
		{"messages messageTypes+since (whole workspace)", func() string {
			return "/v1/messages?messageTypes=image&since=" + time.Now().Add(-24*time.Hour).UTC().Format(time.RFC3339)
		}},
	}
}

// measure makes n requests of each case (after 10 warm-up ones) to srv with the
// API key key, and prints their latencies and the size of the answer.
func measure(srv *httptest.Server, key string, cases []benchCase, n int) {
	client := srv.Client()
	fmt.Printf("\n%-46s %9s %9s %9s %10s\n", "case", "p50", "p99", "max", "body")
	for _, c := range cases {
		var lat []time.Duration
		size := 0
		for i := 0; i < n+10; i++ {
			start := time.Now()
			size = get(client, srv.URL+c.path(), key)
			if i >= 10 {
				lat = append(lat, time.Since(start))
			}
		}
		slices.Sort(lat)
		fmt.Printf("%-46s %9s %9s %9s %9dK\n", c.name, ms(pct(lat, 50)), ms(pct(lat, 99)), ms(lat[len(lat)-1]), size/1024)
	}
}

// printPlans makes each case's request once more, through a router whose
// driver records the SQL it runs, and prints the EXPLAIN ANALYZE plan of each
// statement.
func printPlans(ctx context.Context, a *app.App, dbURL, key string, cases []benchCase) {
	db, err := sql.Open("pgx", dbURL)
	check(err)
	defer db.Close()
	rec := &recorder{Driver: entsql.OpenDB(dialect.Postgres, db)}
	core := *a.Resolver
	core.Client = ent.NewClient(ent.Driver(rec))
	traced := httptest.NewServer(rest.NewRouter(rest.Config{Resolver: &core, Keys: a.Keys,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer traced.Close()
	for _, c := range cases {
		rec.start()
		path := c.path()
		get(traced.Client(), traced.URL+path, key)
		fmt.Printf("\n=== %s: GET %s\n", c.name, path)
		for _, st := range rec.stop() {
			explain(ctx, db, st)
		}
	}
}

// seed fills workspace ws with chats of perChat messages each (about 10% of them
// groups, 3 pinned, 10% archived, a tenth of the messages images and a tenth
// replies) by COPY, and returns the chat ids.
func seed(ctx context.Context, dbURL, ws string, chats, perChat int) []string {
	conn, err := pgx.Connect(ctx, dbURL)
	check(err)
	defer conn.Close(ctx)
	rng := rand.New(rand.NewPCG(7, 11))
	now := time.Now().UTC().Truncate(time.Second)
	words := []string{"hello", "invoice", "meeting", "tomorrow", "thanks", "photo", "call", "price", "order", "ok"}
	jids := make([]string, chats)
	var chatRows [][]any
	var msgRows [][]any
	flush := func() {
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"messages"}, []string{"id", "workspace_id", "origin", "to", "from",
			"type", "text", "wire_type", "media_kind", "media_mime", "reply_to", "status", "created_at", "updated_at",
			"received_at", "confirmed_at", "wa_id", "wa_serialized", "from_me", "dispatch_attempts"}, pgx.CopyFromRows(msgRows))
		check(err)
		msgRows = msgRows[:0]
	}
	for i := range chats {
		kind, jid := "contact", fmt.Sprintf("1555%07d@c.us", i)
		if i%10 == 9 {
			kind, jid = "group", fmt.Sprintf("120363%08d@g.us", i)
		}
		jids[i] = jid
		// The chat's newest message is i minutes old (with some spread); its
		// messages go back about two months.
		last := now.Add(-time.Duration(i)*time.Minute - time.Duration(rng.IntN(60))*time.Second)
		var keys []string
		for j := range perChat {
			at := last.Add(-time.Duration(perChat-1-j) * time.Duration(10+rng.IntN(50)) * time.Minute)
			if j == perChat-1 {
				at = last
			}
			fromMe := rng.IntN(2) == 0
			id := fmt.Sprintf("B%07d%05d", i, j)
			key := engine.Key{FromMe: fromMe, Remote: jid, ID: id}.Serialized()
			from, status := "1555"+fmt.Sprintf("%07d", i)+"@c.us", string(messaging.StatusReceived)
			var received, confirmed any = at, nil
			if fromMe {
				from, status, received, confirmed = "", string(messaging.StatusRead), nil, at
			}
			typ, wire, mediaKind, mime := "text", "chat", "", ""
			text := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))] + fmt.Sprintf(" #%d", j)
			if rng.IntN(10) == 0 {
				typ, wire, mediaKind, mime = "media", "image", "image", "image/jpeg"
			}
			reply := ""
			if len(keys) > 0 && rng.IntN(10) == 0 {
				reply = keys[rng.IntN(len(keys))]
			}
			keys = append(keys, key)
			msgRows = append(msgRows, []any{switchboard.NewID("msg"), ws, "history", jid, from, typ, text, wire,
				mediaKind, mime, reply, status, at, at, received, confirmed, id, key, fromMe, 0})
		}
		chatRows = append(chatRows, []any{switchboard.NewID("cht"), ws, jid, kind, fmt.Sprintf("Chat %d", i),
			i == 5 || i == 500 || i == 5000, i%10 == 3, false, rng.IntN(3), last, "last", false, false, false, 0, 0,
			false, now, now})
		if len(msgRows) >= 50000 {
			flush()
		}
	}
	if len(msgRows) > 0 {
		flush()
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"chats"}, []string{"id", "workspace_id", "jid", "kind", "name",
		"pinned", "archived", "marked_unread", "unread_count", "last_message_at", "last_message_text",
		"last_message_from_me", "restrict", "announce", "participant_count", "subscribers", "history_complete",
		"created_at", "updated_at"}, pgx.CopyFromRows(chatRows))
	check(err)
	_, err = conn.Exec(ctx, "VACUUM ANALYZE")
	check(err)
	return jids
}

// get sends one GET and reads the answer to its end, returning its size;
// anything but a 200 with success true ends the benchmark.
func get(c *http.Client, u, key string) int {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := c.Do(req)
	check(err)
	defer resp.Body.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(resp.Body, head)
	rest, err := io.Copy(io.Discard, resp.Body)
	check(err)
	if resp.StatusCode != http.StatusOK || string(head[:n]) != `{"success":true,` {
		log.Fatalf("GET %s: %d %s", u, resp.StatusCode, head[:n])
	}
	return n + int(rest)
}

// statement is one SQL statement an ent driver ran.
type statement struct {
	query string
	args  []any
}

// recorder is an ent driver that records the statements run outside
// transactions while it is started.
type recorder struct {
	dialect.Driver
	mu    sync.Mutex
	on    bool
	stmts []statement
}

func (r *recorder) start() { r.mu.Lock(); r.on, r.stmts = true, nil; r.mu.Unlock() }

func (r *recorder) stop() []statement {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.stmts
}

func (r *recorder) record(query string, args any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		a, _ := args.([]any)
		r.stmts = append(r.stmts, statement{query, a})
	}
}

// Query records and runs a query.
func (r *recorder) Query(ctx context.Context, query string, args, v any) error {
	r.record(query, args)
	return r.Driver.Query(ctx, query, args, v)
}

// Exec records and runs a statement.
func (r *recorder) Exec(ctx context.Context, query string, args, v any) error {
	r.record(query, args)
	return r.Driver.Exec(ctx, query, args, v)
}

// explain prints the statement (its long argument lists cut short) and its plan.
func explain(ctx context.Context, db *sql.DB, st statement) {
	q := st.query
	if len(q) > 600 {
		q = q[:600] + " …"
	}
	shown := fmt.Sprint(st.args)
	if len(st.args) > 8 {
		shown = fmt.Sprintf("%v … (%d args)", st.args[:8], len(st.args))
	}
	fmt.Printf("\n-- %s\n-- args: %s\n", q, shown)
	rows, err := db.QueryContext(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+st.query, st.args...)
	check(err)
	defer rows.Close()
	for rows.Next() {
		var line string
		check(rows.Scan(&line))
		fmt.Println(line)
	}
	check(rows.Err())
}

// createDatabase drops and creates database name on the server of base.
func createDatabase(ctx context.Context, base, name string) {
	admin, err := sql.Open("pgx", base)
	check(err)
	defer admin.Close()
	_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	check(err)
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	check(err)
}

// databaseURL is base with its database replaced by name.
func databaseURL(base, name string) string {
	u, err := url.Parse(base)
	check(err)
	u.Path = "/" + name
	return u.String()
}

// seeded returns the chat ids of workspace ws that a kept run seeded (the
// bench key's workspace is found again by its name).
func seeded(ctx context.Context, dbURL, ws string) []string {
	conn, err := pgx.Connect(ctx, dbURL)
	check(err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT jid FROM chats WHERE workspace_id = $1 ORDER BY jid", ws)
	check(err)
	jids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	check(err)
	if len(jids) == 0 {
		log.Fatal("-reuse: the database holds no chats of the bench workspace; run once with -keep first")
	}
	return jids
}

func dropDatabase(base, name string) {
	admin, err := sql.Open("pgx", base)
	if err == nil {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	}
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func check(err error) {
	if err != nil && !strings.Contains(err.Error(), "context canceled") {
		log.Fatal(err)
	}
}
