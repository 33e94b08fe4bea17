//go:build mediabench

// Command media measures the memory of a large media file sent and received
// through the gateway engine: a video of -mb MiB (made with ffmpeg) sent once
// from Switchboard's media store and once from an HTTP URL, then received once
// as a message's attachment and kept in the media store, each in a child
// process of its own, through the real paths (a send: spooled to a temporary
// file, probed and thumbnailed by ffprobe/ffmpeg, encrypted and read back like
// whatsmeow's UploadReader; a receipt: downloaded and decrypted in a temporary
// file like whatsmeow's DownloadToFile, then streamed into the store by
// Reserve and Fill, as the media:fetch task does) on a simulated network
// (gateway.OpenBenchEngine and OpenBenchReceiver, built with -tags
// mediabench). Each child reports its peak resident set (VmHWM) after the work
// beside the same before it (ffprobe and ffmpeg run as processes of their own:
// their memory is not in it). The target is under 100 MB.
//
//	make bench-media   # go run -tags mediabench ./bench/media -mb 64
//
// Measured on the 2-core development machine (Go 1.26, SQLite, the database
// media backend in 1 MiB chunks, Debian's ffmpeg 5.1), with -mb 64 (a 67.1 MiB
// 720p H.264 video of 76 s):
//
//	from the media store: peak RSS 52 MB (31 MB before the send), sent in 1.6 s
//	from an HTTP URL:     peak RSS 34 MB (32 MB before the send), sent in 1.1 s
//	received and kept:    peak RSS 43 MB (32 MB before the download), kept in 1.6 s
//
// Before the media backends streamed (the store's bytes were one column read
// whole), the send from the store peaked at 242 MB.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/netguard"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

func main() {
	mb := flag.Int("mb", 64, "size of the video, MiB")
	child := flag.String("child", "", "internal: send from this URL in this process and report")
	db := flag.String("db", "", "internal: the database of the media store")
	receiveFile := flag.String("receive", "", "internal: receive this file in this process and report")
	flag.Parse()
	switch {
	case *child != "":
		send(*child, *db)
		return
	case *receiveFile != "":
		receive(*receiveFile, *db)
		return
	}
	dir, err := os.MkdirTemp("", "sb-media-bench-")
	check(err)
	defer os.RemoveAll(dir)
	video := filepath.Join(dir, "video.mp4")
	makeVideo(video, *mb)
	st, err := os.Stat(video)
	check(err)
	fmt.Printf("video: %.1f MiB H.264 (made with ffmpeg)\n", float64(st.Size())/(1<<20))

	// The media store: the video saved once, before the child that sends it starts.
	dbURL := "sqlite://" + filepath.Join(dir, "sb.db")
	storeURL := saveToStore(dbURL, video)
	// The URL: served by this process, so that the child's memory is the send's.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeFile(w, r, video)
	}))
	defer srv.Close()
	for _, c := range []struct{ name, url string }{{"from the media store", storeURL}, {"from an HTTP URL", srv.URL + "/video.mp4"}} {
		cmd := exec.Command(os.Args[0], "-child", c.url, "-db", dbURL)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		check(err)
		fmt.Printf("%-21s %s", c.name+":", out)
	}
	cmd := exec.Command(os.Args[0], "-receive", video, "-db", dbURL)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	check(err)
	fmt.Printf("%-21s %s", "received and kept:", out)
}

// makeVideo encodes about mb MiB of 720p test pattern.
func makeVideo(path string, mb int) {
	const bitrate = 7_000_000 // bits per second x264 gives at -b:v 8M, about
	secs := mb * (1 << 20) * 8 / bitrate
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25",
		"-vf", "noise=alls=30:allf=t", // incompressible: the bitrate is the size
		"-t", strconv.Itoa(secs), "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "8M", "-minrate", "8M", "-maxrate", "8M",
		"-bufsize", "1M", "-pix_fmt", "yuv420p", "-movflags", "+faststart", path)
	cmd.Stderr = os.Stderr
	check(cmd.Run())
}

func saveToStore(dbURL, video string) string {
	ctx := viewer.WorkspaceContext(context.Background(), "bench")
	client, err := storage.Open(dbURL)
	check(err)
	defer client.Close()
	check(storage.Migrate(ctx, client, dbURL))
	f, err := os.Open(video)
	check(err)
	defer f.Close()
	s := media.NewStore(client, "http://switchboard.example")
	s.MaxBytes = 1 << 30
	o, err := s.Save(ctx, f, "video/mp4", "video.mp4")
	check(err)
	return o.URL
}

// send sends the video behind rawURL through a gateway engine on the simulated
// network and prints the peak resident sets.
func send(rawURL, dbURL string) {
	ctx := viewer.SystemContext(context.Background())
	client, err := storage.Open(dbURL)
	check(err)
	defer client.Close()
	store := media.NewStore(client, "http://switchboard.example")
	e, sent := gateway.OpenBenchEngine(gateway.Config{WorkspaceID: "bench", Sink: discard{}, Media: store,
		HTTP: netguard.Client(time.Minute, true), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer e.Close()
	before := status("VmHWM:")
	start := time.Now()
	_, err = e.Send(ctx, engine.Outgoing{WireID: engine.WireID(rawURL), To: "15552223333@c.us", Type: "media",
		MediaKind: "video", MediaURL: rawURL, Text: "bench"})
	check(err)
	took := time.Since(start)
	v := sent()[0].GetVideoMessage()
	if v.GetWidth() == 0 || len(v.GetJPEGThumbnail()) == 0 {
		log.Fatalf("the video went without its details: %v", v)
	}
	fmt.Printf("peak RSS %d MB (%d MB before the send); %dx%d %ds, %d MB uploaded in %s\n",
		status("VmHWM:")>>10, before>>10, v.GetWidth(), v.GetHeight(), v.GetSeconds(),
		v.GetFileLength()>>20, took.Round(time.Millisecond))
}

// receive receives the video at path as a received message's attachment: the
// gateway engine downloads it from the simulated network's CDN (decrypted in a
// temporary file, as whatsmeow's DownloadToFile does) and it is streamed into
// the media store (Reserve, then Fill), as the media:fetch task does; it
// prints the peak resident sets.
func receive(path, dbURL string) {
	ctx := viewer.WorkspaceContext(context.Background(), "bench")
	client, err := storage.Open(dbURL)
	check(err)
	defer client.Close()
	store := media.NewStore(client, "http://switchboard.example")
	store.MaxBytes = 1 << 30
	e, ref, done, err := gateway.OpenBenchReceiver(gateway.Config{WorkspaceID: "bench", Sink: discard{}, Media: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, path)
	check(err)
	defer done()
	defer e.Close()
	before := status("VmHWM:")
	start := time.Now()
	reserved, err := store.Reserve(ctx, "video/mp4", "received.mp4")
	check(err)
	got, err := e.FetchMediaRef(ctx, engine.Key{Remote: "15552223333@c.us", ID: "3EB0BENCH"}, ref)
	check(err)
	body, closeBody := got.Reader()
	kept, err := store.Fill(ctx, reserved.URL, body, "video/mp4")
	closeBody()
	check(err)
	took := time.Since(start)
	want := fileSHA256(path)
	if kept.SHA256 != want {
		log.Fatalf("kept %s, not the file's %s", kept.SHA256, want)
	}
	fmt.Printf("peak RSS %d MB (%d MB before the download); %d MB kept in %s, SHA-256 checked\n",
		status("VmHWM:")>>10, before>>10, kept.Size>>20, took.Round(time.Millisecond))
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) string {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	check(err)
	return hex.EncodeToString(h.Sum(nil))
}

// status reads a field of /proc/self/status, in kB.
func status(field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	check(err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// discard is a sink for the events of the engine (there are none in a send).
type discard struct{}

func (discard) HandleEvent(context.Context, engine.Event) error { return nil }

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
