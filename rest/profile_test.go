package rest_test

import (
	"bytes"
	"encoding/base64"
	"image/jpeg"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// The account's profile through the sandbox: the starting profile, a change of
// push name and about, a picture stored in the media store and served back as
// a JPEG, its removal; bad input is 400/404/422 naming the field; the profile
// scopes guard it.
func TestProfileThroughSandbox(t *testing.T) {
	e := newEnv(t)
	r := e.Do("GET", "/v1/profile", e.Key, nil)
	if r.Status != 200 {
		t.Fatalf("get profile: %d %s", r.Status, r.Raw)
	}
	p := r.Data()
	engineID := p["engineId"].(string)
	want := map[string]any{"engineId": engineID, "id": p["id"], "pushName": "Sandbox", "about": "Hey there! I am using WhatsApp.", "pictureId": nil, "pictureUrl": nil}
	if diff := cmp.Diff(want, p); diff != "" || !strings.HasSuffix(p["id"].(string), "@c.us") {
		t.Errorf("starting profile (-want +got):\n%s", diff)
	}
	r = e.Do("PATCH", "/v1/profile?engineId="+engineID, e.Key, map[string]any{"pushName": "Acme support", "about": "Open 9-17"})
	if r.Status != 200 || r.Data()["pushName"] != "Acme support" || r.Data()["about"] != "Open 9-17" {
		t.Fatalf("patch profile: %d %s", r.Status, r.Raw)
	}
	pic, _ := pngDataURL(t, 30, 20)
	r = e.Do("PUT", "/v1/profile/picture", e.Key, map[string]any{"fileDataUrl": pic})
	if r.Status != 200 || r.Data()["pictureId"] == nil || r.Data()["pictureUrl"] == nil || r.Data()["pushName"] != "Acme support" {
		t.Fatalf("set picture: %d %s", r.Status, r.Raw)
	}
	pictureURL := r.Data()["pictureUrl"].(string)
	if again := e.Do("GET", "/v1/profile", e.Key, nil).Data(); again["pictureUrl"] != pictureURL {
		t.Errorf("the same picture read again answers %v, want %s", again["pictureUrl"], pictureURL)
	}
	img := fetchURL(t, e, pictureURL)
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width != 30 {
		t.Errorf("the stored picture: %+v %v, want the 30x20 picture as a JPEG", cfg, err)
	}
	r = e.Do("DELETE", "/v1/profile/picture", e.Key, nil)
	if r.Status != 200 || r.Data()["pictureId"] != nil || r.Data()["pictureUrl"] != nil {
		t.Errorf("remove picture: %d %s", r.Status, r.Raw)
	}

	notImage := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("not a picture"))
	for _, tc := range []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"nothing to change", "PATCH", "/v1/profile", map[string]any{}, "422 validation_failed body:too_small"},
		{"push name too long", "PATCH", "/v1/profile", map[string]any{"pushName": strings.Repeat("n", 26)}, "422 validation_failed pushName:too_big"},
		{"push name blank", "PATCH", "/v1/profile", map[string]any{"pushName": "  "}, "422 validation_failed pushName:too_big"},
		{"about too long", "PATCH", "/v1/profile", map[string]any{"about": strings.Repeat("a", 140)}, "422 validation_failed about:too_big"},
		{"unknown field", "PATCH", "/v1/profile", map[string]any{"status": "x"}, "400 invalid_request status:unrecognized_keys"},
		{"picture not an image", "PUT", "/v1/profile/picture", map[string]any{"fileDataUrl": notImage}, "422 validation_failed fileDataUrl:not_an_image"},
		{"picture none", "PUT", "/v1/profile/picture", map[string]any{"fileName": "a.png"}, "422 validation_failed fileDataUrl:invalid_type"},
		{"malformed engine", "GET", "/v1/profile?engineId=nope", nil, "400 invalid_request engineId:invalid_string"},
		{"unknown engine", "GET", "/v1/profile?engineId=eng_nope", nil, "404 not_found engineId:not_found"},
	} {
		if r := e.Do(tc.method, tc.path, e.Key, tc.body); errorOf(r) != tc.want {
			t.Errorf("%s: %s, want %s (%s)", tc.name, errorOf(r), tc.want, r.Raw)
		}
	}
	if got := e.Do("GET", "/v1/profile", e.Key, nil).Data(); got["pushName"] != "Acme support" || got["about"] != "Open 9-17" {
		t.Errorf("bad input changed the profile: %v", got)
	}

	reader := e.NewKey("default", "profile:read")
	other := e.NewKey("default", "messages:read")
	for _, tc := range []struct {
		key, method, path string
		body              any
		want              int
	}{
		{reader, "GET", "/v1/profile", nil, 200},
		{reader, "PATCH", "/v1/profile", map[string]any{"about": "x"}, 403},
		{reader, "DELETE", "/v1/profile/picture", nil, 403},
		{other, "GET", "/v1/profile", nil, 403},
	} {
		if r := e.Do(tc.method, tc.path, tc.key, tc.body); r.Status != tc.want {
			t.Errorf("%s %s: %d, want %d (%s)", tc.method, tc.path, r.Status, tc.want, r.Raw)
		}
	}
}

// An engine that does not serve profile (a gateway's stand-in without it)
// answers 501 not_supported naming the capability.
func TestProfileNotSupported(t *testing.T) {
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	key := e.NewKey("default", "*")
	id := createEngine(e, key, "gateway")["id"].(string)
	fakes.latest(id).pair("15550001111:7@s.whatsapp.net")
	e.Eventually(10*time.Second, "the paired gateway in ping", func() bool { return pinged(e, key, id) })
	for _, path := range []string{"/v1/profile?engineId=" + id} {
		r := e.Do("GET", path, key, nil)
		if errorOf(r) != "501 not_supported engineId:not_supported" || !strings.Contains(string(r.Raw), "capability profile") {
			t.Errorf("GET %s: %s", path, r.Raw)
		}
	}
	r := e.Do("PATCH", "/v1/profile?engineId="+id, key, map[string]any{"about": "x"})
	if errorOf(r) != "501 not_supported engineId:not_supported" {
		t.Errorf("PATCH through an engine without profile: %s", r.Raw)
	}
}

// fetchURL reads a media-store URL from the test server.
func fetchURL(t *testing.T, e *apptest.Env, raw string) []byte {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(e.Server.URL + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", raw, resp.StatusCode, err)
	}
	return b
}
