// Command load drives a running Switchboard with concurrent requests for a fixed
// time (or count) and reports requests/s and latency percentiles. It only targets
// the URL it is given; point it at a server on this machine.
//
//	go run ./bench/load -url http://127.0.0.1:8080 -key $KEY -endpoint ping -c 32 -d 10s
//	go run ./bench/load -url http://127.0.0.1:8080 -key $KEY -endpoint schedule -c 32 -d 10s
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "server base URL")
	key := flag.String("key", os.Getenv("KEY"), "API key (env KEY)")
	endpoint := flag.String("endpoint", "ping", "ping or schedule")
	conc := flag.Int("c", 32, "concurrent clients")
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	max := flag.Int("n", 0, "stop after this many requests (0: no limit)")
	flag.Parse()

	var method, path string
	var body []byte
	switch *endpoint {
	case "ping":
		method, path = http.MethodGet, "/v1/ping"
	case "schedule":
		method, path = http.MethodPost, "/v1/scheduled-messages/+15559871234"
		body = []byte(`{"type":"text","text":"load test"}`)
	default:
		fmt.Fprintln(os.Stderr, "endpoint must be ping or schedule")
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc * 2}, Timeout: 30 * time.Second}
	deadline := time.Now().Add(*dur)
	var sent, failed atomic.Int64
	lat := make([][]time.Duration, *conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if *max > 0 && sent.Add(1) > int64(*max) {
					return
				} else if *max == 0 {
					sent.Add(1)
				}
				req, _ := http.NewRequest(method, *base+path, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+*key)
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil || resp.StatusCode >= 300 {
					failed.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		fmt.Println("no requests completed")
		return
	}
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(float64(len(all))*p))] }
	fmt.Printf("endpoint=%s concurrency=%d requests=%d failed=%d elapsed=%s\n", *endpoint, *conc, len(all), failed.Load(), elapsed.Round(time.Millisecond))
	fmt.Printf("throughput=%.0f req/s p50=%s p90=%s p99=%s max=%s\n", float64(len(all))/elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), all[len(all)-1].Round(time.Microsecond))
}
