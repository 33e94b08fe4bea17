package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// serve logs in the configured format and level, a line on start and on stop, and
// prints the bootstrap key on the first start of an embedded database only.
func TestServeLogsAndBootstrapsOnce(t *testing.T) {
	db := "sqlite://" + t.TempDir() + "/serve.db"
	for i, wantKey := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errOut syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database-url", db, "--log-format", "json", "--log-level", "info"}, &out, &errOut)
		}()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(errOut.String(), "switchboard listening") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("start %d: serve: %v\n%s", i, err, errOut.String())
		}
		logs := errOut.String()
		for _, want := range []string{"switchboard listening", "switchboard shutting down", "switchboard stopped"} {
			if !strings.Contains(logs, want) {
				t.Errorf("start %d: no %q in the log:\n%s", i, want, logs)
			}
		}
		sc := bufio.NewScanner(strings.NewReader(logs))
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Errorf("start %d: log line is not JSON: %s", i, sc.Text())
			}
		}
		if got := strings.Contains(out.String(), "sb_live_"); got != wantKey {
			t.Errorf("start %d: bootstrap key printed = %v, want %v:\n%s", i, got, wantKey, out.String())
		}
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// A client that sends its body too slowly is cut off instead of holding the
// connection forever.
func TestSlowClientsAreCutOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limits := httpLimits{readHeader: 200 * time.Millisecond, read: 300 * time.Millisecond, write: time.Second, idle: time.Second}
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}), slog.New(slog.NewTextHandler(io.Discard, nil)), limits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })

	for name, start := range map[string]string{
		"slow headers": "POST / HTTP/1.1\r\nHost: x\r\n",
		"slow body":    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc",
	} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, start); err != nil {
			t.Fatal(err)
		}
		// The server must end the connection; a test deadline far above the limits
		// keeps a regression from hanging the suite.
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(conn)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: the connection is still open after 10 s", name)
		}
		conn.Close()
	}
}

// The process logger redacts every line: a URL's query and a media token never
// reach the log, whichever package logs them (issue 26, row 11).
func TestProcessLoggerRedacts(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var out syncBuffer
		logger, err := newLogger(&out, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		logger.Info("fetch failed", "err", errors.New(`Get "https://h.example/x?token=s3cret": EOF`), "path", "/media/t0ken/a.png")
		if s := out.String(); strings.Contains(s, "s3cret") || strings.Contains(s, "t0ken") || !strings.Contains(s, "/media/…/a.png") {
			t.Errorf("%s line = %s", format, s)
		}
	}
}

// A 100 KB query string or header reaches the handler, whose limits answer it
// with the error envelope, instead of Go's plain-text 431 (issue 26, row 13).
func TestLongRequestsReachTheRouter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}), slog.New(slog.NewTextHandler(io.Discard, nil)), serverLimits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	long := strings.Repeat("a", 100<<10)
	for name, req := range map[string]func() *http.Request{
		"query string": func() *http.Request {
			r, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/ping?x="+long, nil)
			return r
		},
		"header": func() *http.Request {
			r, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/ping", nil)
			r.Header.Set("X-Padding", long)
			return r
		},
	} {
		resp, err := http.DefaultClient.Do(req())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot {
			t.Errorf("%s of 100 KB = %d, want the handler's answer", name, resp.StatusCode)
		}
	}
}

// A start that cannot listen (the port is taken) prints no bootstrap key and
// uses none up: the next start prints it (issue 33, row 3).
func TestFailedListenKeepsTheBootstrapKey(t *testing.T) {
	db := "sqlite://" + t.TempDir() + "/serve.db"
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var out, errOut syncBuffer
	err = run(context.Background(), []string{"serve", "--addr", taken.Addr().String(), "--database-url", db}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--addr") {
		t.Fatalf("serve on a taken port: %v", err)
	}
	if strings.Contains(out.String(), "sb_live_") {
		t.Fatalf("a failed start printed the key:\n%s", out.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database-url", db}, &out, &errOut)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(errOut.String(), "switchboard listening") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("second start: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "sb_live_") {
		t.Errorf("the next start printed no key:\n%s", out.String())
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
}
