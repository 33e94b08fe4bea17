package rest_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestTextPastTheEdgeIsChecked covers the text REST hands a resolver without
// decoding it as text at its edges (decodeJSON, decodePathParams, the query
// check, parseMultipart): a file part's name, a raw JSON until_date, the parts of
// a streamed music upload and the fields of a streamed large JSON body. The
// resolvers check these themselves (issue 27: the rest of the per-resolver text
// checks went), so each answers 400 invalid_request naming the field.
func TestTextPastTheEdgeIsChecked(t *testing.T) {
	e := newEnv(t)
	sched := e.Do("POST", "/v1/scheduled-messages/+15550009101", e.Key, map[string]any{"type": "text", "text": "ok"})
	if sched.Status != 201 {
		t.Fatalf("schedule = %d %s", sched.Status, sched.Raw)
	}
	id, _ := sched.Data()["id"].(string)

	// withFile is a multipart message body whose mediaFile part is named name.
	withFile := func(name string) (io.Reader, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("type", "media")
		fw, _ := mw.CreateFormFile("mediaFile", name)
		_, _ = fw.Write([]byte("\x89PNG\r\n\x1a\n"))
		_ = mw.Close()
		return &buf, mw.FormDataContentType()
	}
	// musicParts is a streamed multipart music upload: field = value before the file.
	musicParts := func(field, value string) (io.Reader, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField(field, value)
		fw, _ := mw.CreateFormFile("file", "a.mp3")
		_, _ = fw.Write([]byte("ID3"))
		_ = mw.Close()
		return &buf, mw.FormDataContentType()
	}
	// chunked hides the length of a JSON body, so REST streams it field by field.
	chunked := func(body string) (io.Reader, string) {
		return io.MultiReader(strings.NewReader(body)), "application/json"
	}
	tests := []struct {
		name, method, path string
		body               func() (io.Reader, string)
		wantPath           string
	}{
		{"send: file name", "POST", "/v1/messages/+15550009102", func() (io.Reader, string) { return withFile("bad\xff.png") }, "mediaFile.filename"},
		{"schedule: file name", "POST", "/v1/scheduled-messages/+15550009102", func() (io.Reader, string) { return withFile("bad\xff.png") }, "mediaFile.filename"},
		{"update: file name", "PATCH", "/v1/scheduled-messages/" + id, func() (io.Reader, string) { return withFile("bad\xff.png") }, "mediaFile.filename"},
		{"load older: until_date", "POST", "/v1/messages/load_older/+15550009102", func() (io.Reader, string) {
			return strings.NewReader(`{"until_date":"a\u0000b"}`), "application/json"
		}, "until_date"},
		{"music upload: fileName part", "POST", "/v1/music/uploads", func() (io.Reader, string) { return musicParts("fileName", "a\xffb") }, "fileName"},
		{"music upload: audioUrl part", "POST", "/v1/music/uploads", func() (io.Reader, string) { return musicParts("audioUrl", "https://e.com/\x00") }, "audioUrl"},
		{"music stream: fileName", "POST", "/v1/music/uploads", func() (io.Reader, string) {
			return chunked(`{"fileName":"a\u0000b","audioBase64":"SUQz"}`)
		}, "fileName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := tt.body()
			req, _ := http.NewRequest(tt.method, e.Server.URL+tt.path, body)
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Authorization", "Bearer "+e.Key)
			resp := e.Send(req)
			if resp.Status != 400 || resp.Error()["code"] != "invalid_request" || !slices.Contains(resp.DetailPaths(), tt.wantPath) {
				t.Errorf("= %d %s, want 400 invalid_request naming %s", resp.Status, resp.Raw, tt.wantPath)
			}
		})
	}
}
