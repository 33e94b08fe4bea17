package music

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/music/musictest"
)

func TestHTTPProvider(t *testing.T) {
	f := musictest.NewFakeAPI(t, "k1")
	p := NewHTTP(f.URL, "k1", true)
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
	if diff := cmp.Diff(wantBody, f.Body()); diff != "" {
		t.Errorf("custom_generate body (-want +got):\n%s", diff)
	}
	var statuses []Status
	var song *Song
	for range 3 {
		if song, err = p.Fetch(ctx, req, "c2"); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, song.Status)
	}
	if diff := cmp.Diff([]Status{StatusQueued, StatusStreaming, StatusComplete}, statuses); diff != "" {
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
	f := musictest.NewFakeAPI(t, "k1")
	if _, err := NewHTTP(f.URL, "wrong", true).Start(context.Background(), Request{Style: "pop"}); !errors.Is(err, ErrRejected) {
		t.Errorf("bad key: %v, want ErrRejected", err)
	}
	// The guard refuses the loopback server unless private addresses are allowed.
	if _, err := NewHTTP(f.URL, "k1", false).Start(context.Background(), Request{Style: "pop"}); err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("guarded: %v, want a retryable refusal", err)
	}
}
