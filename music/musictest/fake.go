package musictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// FakeAPI is a local fake of a self-hosted music-generation server of the
// custom_generate / get kind. Every generation answers two clips, each reported
// queued, then streaming, then complete on its third poll; finished files are
// served at /files/{clip}.mp3 and .png with the bytes "bytes of {name}".
type FakeAPI struct {
	// URL is the fake's base URL.
	URL string
	// Key is the bearer key it demands.
	Key string

	mu    sync.Mutex
	polls map[string]int
	body  map[string]any
	jobs  int
}

// NewFakeAPI starts a FakeAPI demanding key, stopped when t ends.
func NewFakeAPI(t testing.TB, key string) *FakeAPI {
	f := &FakeAPI{Key: key, polls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/custom_generate", f.generate)
	mux.HandleFunc("GET /api/get", f.get)
	mux.HandleFunc("GET /api/get_limit", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"credits_left": 40, "period": "month", "monthly_limit": 50, "monthly_usage": 10}`))
	})
	mux.HandleFunc("GET /files/{name}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("bytes of " + r.PathValue("name")))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Body is the last custom_generate body.
func (f *FakeAPI) Body() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.body
}

func (f *FakeAPI) generate(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+f.Key {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	f.body = nil
	_ = json.NewDecoder(r.Body).Decode(&f.body)
	f.jobs++
	n := f.jobs
	f.mu.Unlock()
	ids := []string{fmt.Sprintf("c%d", 2*n-1), fmt.Sprintf("c%d", 2*n)}
	_ = json.NewEncoder(w).Encode([]map[string]any{{"id": ids[0], "status": "submitted"}, {"id": ids[1], "status": "submitted"}})
}

func (f *FakeAPI) get(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("ids")
	f.mu.Lock()
	f.polls[id]++
	n := f.polls[id]
	f.mu.Unlock()
	clip := map[string]any{"id": id, "status": []string{"queued", "streaming", "complete"}[min(n-1, 2)], "title": "Song " + id}
	if n >= 3 {
		clip["audio_url"] = f.URL + "/files/" + id + ".mp3"
		clip["image_url"] = f.URL + "/files/" + id + ".png"
		clip["duration"] = "12.5"
		clip["model_name"] = "chirp-v4"
	}
	_ = json.NewEncoder(w).Encode([]any{clip})
}
