package rest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/music"
	"github.com/switchboardhq/switchboard/music/musictest"
	"github.com/switchboardhq/switchboard/viewer"
)

// newMusicEnv runs a Switchboard whose local provider renders short songs.
func newMusicEnv(t *testing.T, configure func(*app.Config)) *apptest.Env {
	t.Helper()
	return apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.MusicMinSeconds, c.MusicMaxSeconds = 6, 10
		c.MusicPollEvery = 50 * time.Millisecond
		if configure != nil {
			configure(c)
		}
	}})
}

// uploadFile posts data as the multipart file part of POST /v1/music/uploads.
func uploadFile(e *apptest.Env, key, fileName string, data io.Reader) *apptest.Response {
	e.T.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("fileName", fileName)
		fw, _ := mw.CreateFormFile("file", fileName)
		if _, err := io.Copy(fw, data); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/v1/music/uploads", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	return e.Send(req)
}

// awaitClip polls GET /v1/music/songs/{id} until the clip is final, and returns
// it with the statuses it was seen in.
func awaitClip(e *apptest.Env, id string) (map[string]any, []music.Status) {
	e.T.Helper()
	var seen []music.Status
	var clip map[string]any
	e.Eventually(90*time.Second, "clip "+id+" to finish", func() bool {
		res := e.Do(http.MethodGet, "/v1/music/songs/"+id, e.Key, nil)
		if res.Status != http.StatusOK {
			e.T.Fatalf("poll: %d %s", res.Status, res.Raw)
		}
		clip = res.Data()
		st := music.Status(clip["status"].(string))
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		return music.Final(st)
	})
	return clip, seen
}

// fetch GETs a URL Switchboard handed out.
func fetch(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestMusicSongEndToEnd(t *testing.T) {
	e := newMusicEnv(t, nil)
	res := e.Do(http.MethodPost, "/v1/music/songs", e.Key, map[string]any{
		"lyrics":      "[Verse]\nSunlight on the open road\nEvery mile a story told\n[Chorus]\nWe are the morning\nWe are the light",
		"style":       "upbeat pop, acoustic guitar",
		"vocalGender": "f", "weirdness": 0.4, "styleInfluence": 0.7,
	})
	if res.Status != http.StatusOK {
		t.Fatalf("POST songs: %d %s", res.Status, res.Raw)
	}
	clips, _ := res.Data()["clips"].([]any)
	if len(clips) != 2 || res.Data()["jobId"] == "" {
		t.Fatalf("want a job with two clips, got %s", res.Raw)
	}
	var audios [][]byte
	for _, c := range clips {
		first := c.(map[string]any)
		if first["status"] != string(music.StatusSubmitted) || first["audioUrl"] != nil {
			t.Errorf("new clip = %v", first)
		}
		clip, seen := awaitClip(e, first["id"].(string))
		if clip["status"] != string(music.StatusComplete) || seen[len(seen)-1] != music.StatusComplete {
			t.Fatalf("clip = %v (seen %v)", clip, seen)
		}
		if clip["title"] != "Sunlight on the open road" || clip["model"] != music.LocalModel {
			t.Errorf("clip title/model = %v / %v", clip["title"], clip["model"])
		}
		resp, audio := fetch(t, clip["audioUrl"].(string))
		if got := []string{resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), resp.Header.Get("X-Content-Type-Options")}; !cmp.Equal(got, []string{"audio/mpeg", "inline", "nosniff"}) {
			t.Errorf("audio served with %v", got)
		}
		heard, err := musictest.DecodeMP3(audio)
		if err != nil {
			t.Fatal(err)
		}
		dur := clip["durationSec"].(float64)
		if heard.Seconds < 6 || heard.Seconds > 10.5 || heard.Seconds-dur > 0.1 || dur-heard.Seconds > 0.1 {
			t.Errorf("decoded %.2fs, durationSec %.2f; want 6-10s", heard.Seconds, dur)
		}
		if heard.RMS < 0.02 {
			t.Errorf("the song is silent (rms %.4f)", heard.RMS)
		}
		resp, img := fetch(t, clip["imageUrl"].(string))
		if _, err := png.Decode(bytes.NewReader(img)); err != nil || resp.Header.Get("Content-Type") != "image/png" {
			t.Errorf("cover: %v, %s", err, resp.Header.Get("Content-Type"))
		}
		audios = append(audios, audio)
	}
	if bytes.Equal(audios[0], audios[1]) {
		t.Error("the two variants are the same song")
	}
	acct := e.Do(http.MethodGet, "/v1/music/account", e.Key, nil)
	if acct.Status != http.StatusOK || acct.Data()["creditsLeft"] != float64(music.LocalCredits) ||
		acct.Data()["monthlyUsage"] != 2.0 { // the two clips of this song
		t.Errorf("account: %d %s", acct.Status, acct.Raw)
	}
}

func TestMusicCoverOfUpload(t *testing.T) {
	e := newMusicEnv(t, nil)
	ref := musictest.WAV(musictest.ClickTrack(150, 6, 22050), 22050)
	up := uploadFile(e, e.Key, "me.wav", bytes.NewReader(ref))
	if up.Status != http.StatusOK || up.Data()["status"] != "complete" {
		t.Fatalf("upload: %d %s", up.Status, up.Raw)
	}
	// The same recording from a URL, fetched through the guard (loopback allowed here).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(ref) }))
	defer srv.Close()
	byURL := e.Do(http.MethodPost, "/v1/music/uploads", e.Key, map[string]any{"audioUrl": srv.URL + "/me.wav", "fileName": "me.wav"})
	if byURL.Status != http.StatusOK {
		t.Fatalf("upload by URL: %d %s", byURL.Status, byURL.Raw)
	}
	res := e.Do(http.MethodPost, "/v1/music/songs", e.Key, map[string]any{
		"lyrics": "[Verse]\nMy own words here", "style": "lo-fi hip hop",
		"uploadId": up.Data()["uploadId"], "audioInfluence": 0.8, "vocalGender": "m",
	})
	if res.Status != http.StatusOK {
		t.Fatalf("POST songs: %d %s", res.Status, res.Raw)
	}
	first := res.Data()["clips"].([]any)[0].(map[string]any)
	if clip, seen := awaitClip(e, first["id"].(string)); clip["status"] != string(music.StatusComplete) {
		t.Fatalf("clip = %v (seen %v)", clip, seen)
	}
}

func TestMusicBadInput(t *testing.T) {
	e := newMusicEnv(t, func(c *app.Config) { c.MusicMaxUpload = 1 << 20 })
	readOnly := e.NewKey("default", "music:read")
	song := func(edit func(map[string]any)) map[string]any {
		b := map[string]any{"lyrics": "[Verse]\nla la la", "style": "pop"}
		edit(b)
		return b
	}
	for _, tc := range []struct {
		name   string
		key    string
		body   any
		status int
		path   string
	}{
		{"empty lyrics", "", song(func(b map[string]any) { b["lyrics"] = "  " }), 422, "lyrics"},
		{"no lyrics", "", song(func(b map[string]any) { delete(b, "lyrics") }), 422, "lyrics"},
		{"no style", "", song(func(b map[string]any) { delete(b, "style") }), 422, "style"},
		{"weirdness above 1", "", song(func(b map[string]any) { b["weirdness"] = 1.5 }), 422, "weirdness"},
		{"styleInfluence below 0", "", song(func(b map[string]any) { b["styleInfluence"] = -0.1 }), 422, "styleInfluence"},
		{"audioInfluence above 1", "", song(func(b map[string]any) { b["audioInfluence"] = 2 }), 422, "audioInfluence"},
		{"unknown vocalGender", "", song(func(b map[string]any) { b["vocalGender"] = "x" }), 422, "vocalGender"},
		{"lyrics too long", "", song(func(b map[string]any) { b["lyrics"] = strings.Repeat("la ", 2000) }), 422, "lyrics"},
		{"unknown uploadId", "", song(func(b map[string]any) { b["uploadId"] = "mup_nope" }), 404, "uploadId"},
		{"weirdness a string", "", song(func(b map[string]any) { b["weirdness"] = "high" }), 400, "weirdness"},
		{"unknown field", "", song(func(b map[string]any) { b["tempo"] = 120 }), 400, "tempo"},
		{"read-only key", readOnly, song(func(map[string]any) {}), 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = e.Key
			}
			res := e.Do(http.MethodPost, "/v1/music/songs", key, tc.body)
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Raw)
			}
			if tc.path != "" && !cmp.Equal(res.DetailPaths(), []string{tc.path}) {
				t.Errorf("detail paths %v, want [%s]", res.DetailPaths(), tc.path)
			}
		})
	}
	t.Run("instrumental needs no lyrics", func(t *testing.T) {
		res := e.Do(http.MethodPost, "/v1/music/songs", e.Key, map[string]any{"style": "ambient piano", "instrumental": true})
		if res.Status != http.StatusOK {
			t.Fatalf("%d %s", res.Status, res.Raw)
		}
	})
	t.Run("unknown song", func(t *testing.T) {
		if res := e.Do(http.MethodGet, "/v1/music/songs/mcl_nope", e.Key, nil); res.Status != 404 {
			t.Errorf("%d %s", res.Status, res.Raw)
		}
	})
	t.Run("another workspace's song", func(t *testing.T) {
		res := e.Do(http.MethodPost, "/v1/music/songs", e.Key, song(func(map[string]any) {}))
		id := res.Data()["clips"].([]any)[0].(map[string]any)["id"].(string)
		other := e.NewKey("other", "*")
		if res := e.Do(http.MethodGet, "/v1/music/songs/"+id, other, nil); res.Status != 404 {
			t.Errorf("%d %s", res.Status, res.Raw)
		}
	})
	t.Run("non-audio upload", func(t *testing.T) {
		res := uploadFile(e, e.Key, "doc.pdf", strings.NewReader("%PDF-1.7 this is not audio"))
		if res.Status != 422 || !cmp.Equal(res.DetailPaths(), []string{"file"}) {
			t.Errorf("%d %s", res.Status, res.Raw)
		}
		res = e.Do(http.MethodPost, "/v1/music/uploads", e.Key, map[string]any{"audioBase64": "aGVsbG8gd29ybGQgbm90IGF1ZGlv"})
		if res.Status != 422 || !cmp.Equal(res.DetailPaths(), []string{"audioBase64"}) {
			t.Errorf("%d %s", res.Status, res.Raw)
		}
	})
	t.Run("no source", func(t *testing.T) {
		if res := e.Do(http.MethodPost, "/v1/music/uploads", e.Key, map[string]any{"fileName": "a.mp3"}); res.Status != 422 {
			t.Errorf("%d %s", res.Status, res.Raw)
		}
	})
	t.Run("oversized upload", func(t *testing.T) {
		big := io.MultiReader(strings.NewReader("ID3"), io.LimitReader(zeros{}, 3<<20))
		if res := uploadFile(e, e.Key, "big.mp3", big); res.Status != 413 {
			t.Errorf("%d %s", res.Status, res.Raw)
		}
	})
	t.Run("private audioUrl", func(t *testing.T) {
		guarded := newMusicEnv(t, func(c *app.Config) { c.MediaAllowPrivate = false })
		res := guarded.Do(http.MethodPost, "/v1/music/uploads", guarded.Key, map[string]any{"audioUrl": "https://127.0.0.1/a.mp3"})
		if res.Status != 422 || !cmp.Equal(res.DetailPaths(), []string{"audioUrl"}) {
			t.Errorf("%d %s", res.Status, res.Raw)
		}
	})
}

// zeros reads zero bytes forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestMusicReconcilerRequeuesStuckClips(t *testing.T) {
	e := newMusicEnv(t, nil)
	ctx := viewer.WorkspaceContext(context.Background(), defaultWorkspaceID(t, e))
	// A generation whose task Redis lost: its clips sit in submitted.
	old := time.Now().Add(-time.Hour)
	var ids []string
	for v := range music.Variants {
		c, err := e.App.Client.MusicClip.Create().SetJobID("mjb_lost").SetVariant(v).SetProvider("local").
			SetStatus(string(music.StatusSubmitted)).SetRequest([]byte(`{"lyrics":"[Verse]\nla la la","style":"rock"}`)).
			SetCreatedAt(old).SetUpdatedAt(old).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	n, err := e.App.Jobs.Music.Reconcile(context.Background(), time.Now())
	if err != nil || n != 1 {
		t.Fatalf("ReconcileMusic = %d, %v; want one generation queued", n, err)
	}
	for _, id := range ids {
		if clip, seen := awaitClip(e, id); clip["status"] != string(music.StatusComplete) {
			t.Errorf("clip %s = %v (seen %v)", id, clip, seen)
		}
	}
	// Clips past the give-up age end in error instead.
	ancient := time.Now().Add(-3 * time.Hour)
	c, _ := e.App.Client.MusicClip.Create().SetJobID("mjb_ancient").SetVariant(0).SetProvider("local").
		SetStatus(string(music.StatusRunning)).SetRequest([]byte(`{}`)).SetCreatedAt(ancient).SetUpdatedAt(ancient).Save(ctx)
	if _, err := e.App.Jobs.Music.Reconcile(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	res := e.Do(http.MethodGet, "/v1/music/songs/"+c.ID, e.Key, nil)
	if got := fmt.Sprint(res.Data()["status"], " ", res.Data()["errorType"]); got != "error timeout" {
		t.Errorf("ancient clip: %s", res.Raw)
	}
}

func defaultWorkspaceID(t *testing.T, e *apptest.Env) string {
	t.Helper()
	res := e.Do(http.MethodGet, "/v1/account", e.Key, nil)
	id, _ := res.Data()["id"].(string)
	if id == "" {
		t.Fatalf("account: %s", res.Raw)
	}
	return id
}

func TestMusicOverGraphQL(t *testing.T) {
	e := newMusicEnv(t, nil)
	res := gql(e, e.Key, `mutation($in: SongInput!) { generateSong(input: $in) { jobId clips { id status audioUrl } } }`,
		map[string]any{"in": map[string]any{"style": "ambient piano", "instrumental": true}})
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	id := res.Data["generateSong"].(map[string]any)["clips"].([]any)[1].(map[string]any)["id"].(string)
	clip, _ := awaitClip(e, id)
	got := gql(e, e.NewKey("default", "music:read"), `query($id: ID!) { musicSong(id: $id) { status audioUrl title } musicAccount { creditsLeft } }`,
		map[string]any{"id": id})
	want := map[string]any{"musicSong": map[string]any{"status": "complete", "audioUrl": clip["audioUrl"], "title": "Untitled ambient piano"},
		"musicAccount": map[string]any{"creditsLeft": float64(music.LocalCredits)}}
	if diff := cmp.Diff(want, got.Data); diff != "" || len(got.Errors) > 0 {
		t.Errorf("query (-want +got):\n%s%+v", diff, got.Errors)
	}
	// The dashboard's player lists the workspace's clips, newest first; another
	// workspace sees none of them.
	list := gql(e, e.NewKey("default", "music:read"), `{ musicClipList(limit: 10) { total items { id status } } }`, nil)
	if page, _ := list.Data["musicClipList"].(map[string]any); len(list.Errors) > 0 || page["total"] != float64(2) {
		t.Errorf("musicClipList = %+v", list)
	}
	if other := gql(e, e.NewKey("other", "*"), `{ musicClipList { total } }`, nil); other.Data["musicClipList"].(map[string]any)["total"] != float64(0) {
		t.Errorf("another workspace lists %+v", other.Data)
	}
	bad := gql(e, e.Key, `mutation { generateSong(input: {lyrics: "la", style: "pop", weirdness: 3}) { jobId } }`, nil)
	if len(bad.Errors) != 1 || bad.Errors[0].Extensions["code"] != "validation_failed" {
		t.Errorf("weirdness 3: %+v", bad.Errors)
	}
}

func TestMusicHTTPProviderEndToEnd(t *testing.T) {
	fake := musictest.NewFakeAPI(t, "k1")
	e := newMusicEnv(t, func(c *app.Config) { c.MusicURL, c.MusicKey, c.MusicAllowPrivate = fake.URL, "k1", true })
	res := e.Do(http.MethodPost, "/v1/music/songs", e.Key, map[string]any{"lyrics": "[Verse]\nla la", "style": "pop", "vocalGender": "m"})
	if res.Status != http.StatusOK {
		t.Fatalf("POST songs: %d %s", res.Status, res.Raw)
	}
	first := res.Data()["clips"].([]any)[0].(map[string]any)
	clip, seen := awaitClip(e, first["id"].(string))
	want := map[string]any{"id": first["id"], "status": "complete", "title": "Song c1", "durationSec": 12.5, "model": "chirp-v4"}
	got := map[string]any{}
	for k := range want {
		got[k] = clip[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clip (-want +got):\n%s", diff)
	}
	if seen[0] == music.StatusComplete {
		t.Errorf("seen %v: never saw the clip unfinished", seen)
	}
	if _, audio := fetch(t, clip["audioUrl"].(string)); string(audio) != "bytes of c1.mp3" {
		t.Errorf("audio copied as %q", audio)
	}
	if acct := e.Do(http.MethodGet, "/v1/music/account", e.Key, nil); acct.Data()["creditsLeft"] != 40.0 || acct.Data()["plan"] != "month" {
		t.Errorf("account: %s", acct.Raw)
	}
}

// postStreamed posts a JSON body of unknown length (chunked), written by write.
func postStreamed(e *apptest.Env, path string, write func(w io.Writer) error) *apptest.Response {
	e.T.Helper()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(write(pw)) }()
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+path, pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.Key)
	return e.Send(req)
}

func TestMusicUploadStreamedBase64(t *testing.T) {
	e := newMusicEnv(t, func(c *app.Config) { c.MusicMaxUpload = 1 << 20 })
	wav := musictest.WAV(musictest.ClickTrack(120, 4, 22050), 22050) // 176 kB
	b64 := base64.StdEncoding.EncodeToString(wav)
	body := func(prefix, value, suffix string) func(io.Writer) error {
		return func(w io.Writer) error {
			_, err := io.WriteString(w, prefix+strings.ReplaceAll(value, "/", `\/`)+suffix)
			return err
		}
	}
	res := postStreamed(e, "/v1/music/uploads", body(`{"fileName": "click.wav", "audioBase64": "data:audio/wav;base64,`, b64, `"}`))
	if res.Status != http.StatusOK {
		t.Fatalf("streamed upload: %d %s", res.Status, res.Raw)
	}
	up, err := e.App.Client.MusicUpload.Get(viewer.SystemContext(context.Background()), res.Data()["uploadId"].(string))
	if err != nil || up.Size != int64(len(wav)) || up.FileName != "click.wav" || up.Format != music.FormatWAV {
		t.Errorf("stored %+v, %v; want %d bytes of WAV", up, err, len(wav))
	}
	big := base64.StdEncoding.EncodeToString(append([]byte("ID3"), make([]byte, 2<<20)...))
	for _, tc := range []struct {
		name   string
		write  func(io.Writer) error
		status int
		path   string
	}{
		{"not audio", body(`{"audioBase64": "`, base64.StdEncoding.EncodeToString([]byte("plain text, not audio")), `"}`), 422, "audioBase64"},
		{"corrupt base64", body(`{"audioBase64": "`, b64[:1000]+"!!!!"+b64[1000:], `"}`), 422, "audioBase64"},
		{"oversized", body(`{"audioBase64": "`, big, `"}`), 413, ""},
		{"a field after audioBase64", body(`{"audioBase64": "`, b64, `", "fileName": "x.wav"}`), 400, "body"},
		{"unknown field", body(`{"audio": "`, "x", `"}`), 400, "audio"},
		{"number for fileName", body(`{"fileName": 3, "audioBase64": "`, b64, `"}`), 400, "fileName"},
		{"audioUrl and audioBase64", body(`{"audioUrl": "https://example.com/a.mp3", "audioBase64": "`, b64, `"}`), 422, "audioUrl"},
		{"no source", body(`{"fileName": "`, "a.wav", `"}`), 422, "audioUrl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := postStreamed(e, "/v1/music/uploads", tc.write)
			if res.Status != tc.status {
				t.Fatalf("%d, want %d: %s", res.Status, tc.status, res.Raw)
			}
			if tc.path != "" && !cmp.Equal(res.DetailPaths(), []string{tc.path}) {
				t.Errorf("detail paths %v, want [%s]", res.DetailPaths(), tc.path)
			}
		})
	}
}
