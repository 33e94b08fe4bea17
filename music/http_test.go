package music

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeServer is a local fake of a custom_generate / get music API: each clip
// is reported queued, then streaming, then complete.
type fakeServer struct {
	mu    sync.Mutex
	polls map[string]int
	body  map[string]any
	srv   *httptest.Server
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{polls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/custom_generate", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k1" {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		_ = json.NewDecoder(r.Body).Decode(&f.body)
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode([]map[string]any{{"id": "c1", "status": "submitted"}, {"id": "c2", "status": "submitted"}})
	})
	mux.HandleFunc("GET /api/get", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("ids")
		f.mu.Lock()
		f.polls[id]++
		n := f.polls[id]
		f.mu.Unlock()
		clip := map[string]any{"id": id, "status": []string{"queued", "streaming", "complete"}[min(n-1, 2)], "title": "Song " + id}
		if n >= 3 {
			clip["audio_url"] = f.srv.URL + "/files/" + id + ".mp3"
			clip["image_url"] = f.srv.URL + "/files/" + id + ".png"
			clip["duration"] = "12.5"
			clip["model_name"] = "chirp-v4"
		}
		_ = json.NewEncoder(w).Encode([]any{clip})
	})
	mux.HandleFunc("GET /api/get_limit", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"credits_left": 40, "period": "month", "monthly_limit": 50, "monthly_usage": 10}`))
	})
	mux.HandleFunc("GET /files/{name}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("bytes of " + r.PathValue("name")))
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func TestHTTPProvider(t *testing.T) {
	f := newFakeServer(t)
	p := NewHTTP(f.srv.URL, "k1", true)
	ctx := context.Background()
	w := 0.25
	req := Request{Lyrics: "[Verse]\nla la", Style: "pop", VocalGender: VocalMale, Weirdness: &w}
	handles, err := p.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c1", "c2"}, handles); diff != "" {
		t.Errorf("handles (-want +got):\n%s", diff)
	}
	wantBody := map[string]any{"prompt": "[Verse]\nla la", "tags": "pop", "negative_tags": "", "title": "",
		"make_instrumental": false, "wait_audio": false, "vocal_gender": "m",
		"control_sliders": map[string]any{"weirdness_constraint": 0.25}}
	if diff := cmp.Diff(wantBody, f.body); diff != "" {
		t.Errorf("custom_generate body (-want +got):\n%s", diff)
	}
	var statuses []string
	var song *Song
	for range 3 {
		if song, err = p.Fetch(ctx, req, "c2"); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, song.Status)
	}
	if diff := cmp.Diff([]string{StatusQueued, StatusStreaming, StatusComplete}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	got := []any{song.Title, song.DurationSec, song.Model, string(song.Audio), string(song.Image)}
	if diff := cmp.Diff([]any{"Song c2", 12.5, "chirp-v4", "bytes of c2.mp3", "bytes of c2.png"}, got); diff != "" {
		t.Errorf("song (-want +got):\n%s", diff)
	}
	acct, err := p.Account(ctx)
	if err != nil || acct.CreditsLeft != 40 || *acct.MonthlyLimit != 50 {
		t.Errorf("Account = %+v, %v", acct, err)
	}
}

func TestHTTPProviderErrors(t *testing.T) {
	f := newFakeServer(t)
	if _, err := NewHTTP(f.srv.URL, "wrong", true).Start(context.Background(), Request{Style: "pop"}); !errors.Is(err, ErrRejected) {
		t.Errorf("bad key: %v, want ErrRejected", err)
	}
	// The guard refuses the loopback server unless private addresses are allowed.
	if _, err := NewHTTP(f.srv.URL, "k1", false).Start(context.Background(), Request{Style: "pop"}); err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("guarded: %v, want a retryable refusal", err)
	}
}
