// Command upload measures a large music upload end to end: it runs a Switchboard
// in process (embedded default), streams an upload of -mb megabytes of
// MP3-looking data to POST /v1/music/uploads from a generator (nothing buffered
// on the client side) as a multipart file, or with -json as the audioBase64 of a
// JSON body, and reports the peak heap of the whole process, sampled every few
// milliseconds, beside the heap before the upload.
//
//	go run ./bench/upload -mb 100 [-json]
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
)

func main() {
	mb := flag.Int64("mb", 100, "upload size in MiB")
	asJSON := flag.Bool("json", false, "send a JSON body with audioBase64 instead of multipart")
	flag.Parse()
	dir, err := os.MkdirTemp("", "sb-upload-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	srv := httptest.NewUnstartedServer(nil)
	a, err := app.New(ctx, app.Config{Addr: "127.0.0.1:0", DatabaseURL: "sqlite://" + dir + "/sb.db", Role: app.RoleAPI,
		DataDir: dir, PublicURL: "http://" + srv.Listener.Addr().String(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	srv.Config.Handler = a.Handler
	srv.Start()
	defer srv.Close()
	key, err := auth.CreateKey(ctx, a.Client, app.DefaultWorkspace, []string{"music:write"}, "bench")
	if err != nil {
		log.Fatal(err)
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	peak, stop := samplePeak()

	body, contentType := uploadBody(*mb<<20, *asJSON)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/music/uploads", body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+key.Key)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	stop()
	fmt.Printf("upload %d MiB (json=%v): HTTP %d in %s (%.0f MiB/s)\n%s", *mb, *asJSON, resp.StatusCode, took.Round(time.Millisecond), float64(*mb)/took.Seconds(), answer)
	fmt.Printf("heap before %.1f MiB, peak during upload %.1f MiB\n", float64(before)/(1<<20), float64(peak.Load())/(1<<20))
}

// samplePeak samples the heap every 5 ms until stop, keeping its peak.
func samplePeak() (peak *atomic.Uint64, stop func()) {
	peak = new(atomic.Uint64)
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	return peak, func() { close(done) }
}

// uploadBody streams an upload of size bytes of MP3-looking data from a
// generator: the audioBase64 of a JSON body, or a multipart file. It returns the
// body and its content type.
func uploadBody(size int64, asJSON bool) (body io.Reader, contentType string) {
	pr, pw := io.Pipe()
	if asJSON {
		go func() {
			_, _ = io.WriteString(pw, `{"fileName": "big.mp3", "audioBase64": "`)
			enc := base64.NewEncoder(base64.StdEncoding, pw)
			_, _ = io.WriteString(enc, "ID3")
			_, err := io.Copy(enc, io.LimitReader(zeros{}, size-3))
			if err == nil {
				err = enc.Close()
			}
			if err == nil {
				_, err = io.WriteString(pw, `"}`)
			}
			pw.CloseWithError(err)
		}()
		return pr, "application/json"
	}
	mw := multipart.NewWriter(pw)
	go func() {
		fw, _ := mw.CreateFormFile("file", "big.mp3")
		_, _ = io.WriteString(fw, "ID3")
		if _, err := io.Copy(fw, io.LimitReader(zeros{}, size-3)); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(mw.Close())
	}()
	return pr, mw.FormDataContentType()
}

// zeros reads zero bytes forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
