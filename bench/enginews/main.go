// Command enginews measures what the engine WebSocket lets a client cost the
// server in memory (issue 26, rows 2 and 4). It runs Switchboard in a child
// process (embedded SQLite and Redis, or -database-url / -redis-url), reads the
// child's resident set from /proc before, at its peak (VmHWM) and after each
// attack, and prints the figures:
//
//   - hello: -sockets connections without a token each send one hello of just
//     under 16 MiB, a capabilities array of ~2.4M items (the default frame limit
//     the server once applied before checking any token);
//
//   - batch: a connected engine sends one events frame of -events minimal acks
//     (200,000 of 36 bytes: 7.2 MB), and waits for its ack;
//
//   - full: a connected engine sends one frame of 1,000 valid acks (the default
//     maxBatch), which the server stores.
//
//     go run ./bench/enginews
//     go run ./bench/enginews -attack batch -database-url 'postgres://postgres@127.0.0.1:5432/bench?sslmode=disable'
//
// The child holds its figures only: this process builds the frames, so its own
// memory is not counted.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
)

func main() {
	serve := flag.Bool("serve", false, "run the server (the child)")
	attack := flag.String("attack", "all", "hello, batch, full or all")
	sockets := flag.Int("sockets", 10, "connections of the hello attack")
	events := flag.Int("events", 200_000, "events of the batch attack's frame")
	dbURL := flag.String("database-url", "", "the server's database (a temporary SQLite when empty)")
	redisURL := flag.String("redis-url", "", "the server's Redis (embedded when empty)")
	flag.Parse()
	log.SetFlags(0)
	if *serve {
		runServer(*dbURL, *redisURL)
		return
	}
	exe, err := os.Executable()
	check(err)
	for _, a := range []string{"hello", "batch", "full"} {
		if *attack != "all" && *attack != a {
			continue
		}
		// A fresh server for each attack: the peak of one is not the other's.
		s := startServer(exe, *dbURL, *redisURL)
		switch a {
		case "hello":
			helloAttack(s, *sockets)
		case "batch":
			batchAttack(s, *events, false)
		case "full":
			batchAttack(s, 1000, true)
		}
		s.stop()
	}
}

// server is the child process, as the parent sees it.
type server struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	token string
}

func startServer(exe, dbURL, redisURL string) *server {
	cmd := exec.Command(exe, "-serve", "-database-url", dbURL, "-redis-url", redisURL)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	check(err)
	stdout, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	check(err)
	url, token, _ := strings.Cut(strings.TrimSpace(line), " ")
	s := &server{cmd: cmd, stdin: stdin, url: url, token: token}
	time.Sleep(2 * time.Second) // let the start settle
	return s
}

func (s *server) stop() {
	_ = s.stdin.Close()
	_ = s.cmd.Wait()
}

// rss and peak read the child's resident set (VmRSS) and its high-water mark
// (VmHWM), in MB.
func (s *server) rss() int64  { return procStatus(s.cmd.Process.Pid, "VmRSS:") }
func (s *server) peak() int64 { return procStatus(s.cmd.Process.Pid, "VmHWM:") }

func procStatus(pid int, field string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	check(err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb / 1024
		}
	}
	return 0
}

func (s *server) endpoint() string {
	return "ws" + strings.TrimPrefix(s.url, "http") + "/v1/engines/connect"
}

// helloAttack: n sockets without a token, each one hello of just under 16 MiB.
func helloAttack(s *server, n int) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"hello","kind":"regular","capabilities":[`)
	items := 0
	for buf.Len() < 16<<20-64 {
		buf.WriteString(`"send",`)
		items++
	}
	buf.WriteString(`"send"]}`)
	hello := buf.Bytes()
	before := s.rss()
	start := time.Now()
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcome := oneHello(s.endpoint(), hello)
			mu.Lock()
			outcomes[outcome]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(start)
	time.Sleep(3 * time.Second)
	fmt.Printf("hello: %d sockets without a token, each a %.1f MiB hello of %d capabilities (%s)\n",
		n, float64(len(hello))/(1<<20), items+1, took.Round(time.Millisecond))
	fmt.Printf("  server RSS before %d MB, peak %d MB, 3 s after %d MB; outcomes %v\n", before, s.peak(), s.rss(), outcomes)
}

// oneHello sends one hello and says how the server answered it.
func oneHello(url string, hello []byte) string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		if resp != nil {
			return "HTTP " + strconv.Itoa(resp.StatusCode)
		}
		return "dial: " + err.Error()
	}
	defer ws.CloseNow()
	werr := ws.Write(ctx, websocket.MessageText, hello)
	_, _, err = ws.Read(ctx)
	if code := websocket.CloseStatus(err); code != -1 {
		return "close " + strconv.Itoa(int(code))
	}
	if werr != nil {
		return "write failed"
	}
	return "read: " + fmt.Sprint(err)
}

// batchAttack: a connected engine sends one frame of n minimal events (valid
// acks of messages nobody sent, when valid).
func batchAttack(s *server, n int, valid bool) {
	hdr := http.Header{"Authorization": {"Bearer " + s.token}}
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, s.endpoint(), &websocket.DialOptions{HTTPHeader: hdr})
	check(err)
	defer ws.CloseNow()
	ws.SetReadLimit(64 << 20)
	check(ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","kind":"regular","capabilities":["send"],"version":1}`)))
	_, welcome, err := ws.Read(ctx)
	check(err)
	var w struct {
		HeartbeatMs int64
		MaxBatch    int
	}
	check(json.Unmarshal(welcome, &w))
	go func() { // heartbeat, as an engine does, while the frame is handled
		for {
			time.Sleep(time.Duration(w.HeartbeatMs) * time.Millisecond)
			if ws.Write(ctx, websocket.MessageText, []byte(`{"type":"heartbeat"}`)) != nil {
				return
			}
		}
	}()
	var buf bytes.Buffer
	buf.WriteString(`{"type":"events","id":"evb_bench","events":[`)
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		if valid {
			fmt.Fprintf(&buf, `{"id":"e%d","type":"ack","key":{"remote":"15550000000@c.us","id":"3EB0%06d"},"ack":2}`, i, i)
		} else {
			fmt.Fprintf(&buf, `{"type":"ack","key":{"id":"%06d"}}`, i%1_000_000)
		}
	}
	buf.WriteString(`]}`)
	frame := buf.Bytes()
	before := s.rss()
	start := time.Now()
	check(ws.Write(ctx, websocket.MessageText, frame))
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	_, ack, err := ws.Read(rctx)
	took := time.Since(start)
	answer := string(ack)
	if err != nil {
		answer = err.Error()
	}
	time.Sleep(3 * time.Second)
	fmt.Printf("batch: one events frame of %d events, %.1f MB (the welcome's maxBatch: %d)\n", n, float64(len(frame))/1e6, w.MaxBatch)
	fmt.Printf("  server RSS before %d MB, peak %d MB, 3 s after %d MB; answered in %s: %.200s\n",
		before, s.peak(), s.rss(), took.Round(time.Millisecond), answer)
}

// runServer is the child: a Switchboard with one remote engine, whose URL and
// token it prints; it stops when its stdin closes.
func runServer(dbURL, redisURL string) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench_enginews")
	check(err)
	defer os.RemoveAll(dir)
	if dbURL == "" {
		dbURL = "sqlite://" + dir + "/enginews.db"
	}
	srv := httptest.NewUnstartedServer(nil)
	a, err := app.New(ctx, app.Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, RedisURL: redisURL, Role: app.RoleAll,
		SandboxWorkspaces: []string{"nobody"}, DataDir: dir, PresenceTTL: 30 * time.Second,
		PublicURL: "http://" + srv.Listener.Addr().String(),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	check(err)
	defer a.Close()
	srv.Config.Handler = a.Handler
	srv.Start()
	defer srv.Close()
	check(a.Start(ctx))
	issued, err := auth.CreateKey(ctx, a.Client, "bench", []string{"*"}, "enginews")
	check(err)
	body := strings.NewReader(`{"kind":"remote","name":"bench"}`)
	req, _ := http.NewRequest("POST", srv.URL+"/v1/engines", body)
	req.Header.Set("Authorization", "Bearer "+issued.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	check(err)
	var created struct{ Data struct{ Token string } }
	check(json.NewDecoder(resp.Body).Decode(&created))
	resp.Body.Close()
	fmt.Println(srv.URL, created.Data.Token)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
