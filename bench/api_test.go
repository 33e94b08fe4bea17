// Package bench holds Go benchmarks of the API through the real router; load/ is a
// load generator for a running server.
package bench

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/switchboardhq/switchboard/app/apptest"
)

func benchEndpoint(b *testing.B, method, path string, body []byte) {
	e := apptest.New(b, apptest.Options{RedisDB: 3})
	client := e.Server.Client()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(method, e.Server.URL+path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.Key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
}

func BenchmarkPing(b *testing.B) { benchEndpoint(b, "GET", "/v1/ping", nil) }

func BenchmarkScheduleMessage(b *testing.B) {
	benchEndpoint(b, "POST", "/v1/scheduled-messages/+15559871234", []byte(`{"type":"text","text":"bench"}`))
}
