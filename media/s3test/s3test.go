// Package s3test gives tests an S3-compatible bucket for the media store: the
// real server named by TEST_MEDIA_S3_URL, or else a gofakes3 server, in the
// test's process or (for memory measurements) in a child process.
package s3test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/switchboardhq/switchboard"
)

// childEnv makes a test binary serve a fake S3 instead of running its tests.
const childEnv = "SWITCHBOARD_FAKE_S3_CHILD"

// URL is a SWITCHBOARD_MEDIA_URL for t: TEST_MEDIA_S3_URL under a prefix of
// t's own, or an in-process gofakes3 server's that t's end stops.
func URL(t testing.TB) string {
	t.Helper()
	if u := Real(t); u != "" {
		return u
	}
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	return fakeURL(srv.Listener.Addr().String())
}

// Real is TEST_MEDIA_S3_URL under a prefix of t's own, or "" when it is not set.
func Real(t testing.TB) string {
	raw := os.Getenv("TEST_MEDIA_S3_URL")
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("s3test: TEST_MEDIA_S3_URL: %v", err)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/test-" + strings.ToLower(switchboard.RandomToken(8))
	return u.String()
}

// fakeURL is the media URL of a gofakes3 server at addr (it takes any credentials).
func fakeURL(addr string) string {
	return "s3://fake:fake-secret@switchboard-media/test?endpoint=" + addr + "&secure=false"
}

// Child is a SWITCHBOARD_MEDIA_URL of a gofakes3 server run by a child
// process (the test binary again, see ServeIfChild), so the bytes it holds are
// not in the test's memory; TEST_MEDIA_S3_URL's server when that is set.
func Child(t testing.TB) string {
	t.Helper()
	if u := Real(t); u != "" {
		return u
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	alive, err := cmd.StdinPipe() // the child ends when it closes (with the test)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("s3test: start the fake S3: %v", err)
	}
	t.Cleanup(func() { _ = alive.Close(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("s3test: the fake S3 said no address: %v", err)
	}
	return fakeURL(strings.TrimSpace(addr))
}

// ServeIfChild serves a gofakes3 server and never returns when the process is
// a Child; a test package that uses Child calls it first in its TestMain.
func ServeIfChild() {
	if os.Getenv(childEnv) == "" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	go func() { // the parent holds stdin open while it runs
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	err = http.Serve(ln, gofakes3.New(s3mem.New()).Server())
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
