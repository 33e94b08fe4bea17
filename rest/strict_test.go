package rest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// JSON bodies are exact: a key that names a field only up to case is unknown, a
// key given twice is refused, and an unknown query parameter is refused with the
// list of the accepted ones (issue 33, row 12).
func TestStrictInput(t *testing.T) {
	e := newEnv(t)
	type detail struct{ Path, Code string }
	tests := []struct {
		name, method, target string
		body                 any
		status               int
		want                 []detail
		says                 string
	}{
		{"upper-case keys", "POST", "/v1/scheduled-messages/+15551234567", `{"TYPE":"text","TEXT":"x"}`, 400,
			[]detail{{"TYPE", "unrecognized_keys"}}, "did you mean"},
		{"sendat for sendAt", "POST", "/v1/scheduled-messages/+15551234567", `{"type":"text","text":"x","sendat":"2030-01-01T00:00:00Z"}`, 400,
			[]detail{{"sendat", "unrecognized_keys"}}, "case-sensitive"},
		{"duplicate key", "POST", "/v1/scheduled-messages/+15551234567", `{"type":"text","text":"x","text":"y"}`, 400,
			[]detail{{"text", "duplicate_key"}}, "more than once"},
		{"webhook body case", "POST", "/v1/webhooks", `{"url":"https://example.com/h","events":["message.received"],"Description":"x"}`, 400,
			[]detail{{"Description", "unrecognized_keys"}}, ""},
		{"unknown query parameter", "GET", "/v1/webhooks?limmit=5", nil, 400,
			[]detail{{"limmit", "unrecognized_keys"}}, "accepted parameters: limit, skip"},
		{"two unknown query parameters", "GET", "/v1/webhooks?a=1&b=2", nil, 400,
			[]detail{{"a", "unrecognized_keys"}, {"b", "unrecognized_keys"}}, "(and 1 more issue)"},
		{"query parameter of a route without any", "GET", "/v1/ping?x=1", nil, 400,
			[]detail{{"x", "unrecognized_keys"}}, "accepted parameters: none"},
		{"negative limit", "GET", "/v1/webhooks?limit=-1", nil, 422,
			[]detail{{"limit", "too_small"}}, ""},
		{"limit too big", "GET", "/v1/webhooks?limit=1000", nil, 422,
			[]detail{{"limit", "too_big"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Do(tt.method, tt.target, e.Key, tt.body)
			if resp.Status != tt.status && !(tt.status == 422 && resp.Status == 400) {
				t.Fatalf("status = %d, want %d: %s", resp.Status, tt.status, resp.Raw)
			}
			var got []detail
			for _, d := range resp.Error()["details"].([]any) {
				m := d.(map[string]any)
				got = append(got, detail{fmt.Sprint(m["path"]), fmt.Sprint(m["code"])})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("details (-want +got):\n%s\n%s", diff, resp.Raw)
			}
			if !strings.Contains(string(resp.Raw), tt.says) {
				t.Errorf("answer does not say %q: %s", tt.says, resp.Raw)
			}
		})
	}
	// The exact spelling still works, and a known query parameter is taken.
	if resp := e.Do("POST", "/v1/scheduled-messages/+15551234567", e.Key, `{"type":"text","text":"x","sendAt":"`+futureRFC3339()+`"}`); resp.Status != 201 && resp.Status != 200 {
		t.Errorf("exact body = %d: %s", resp.Status, resp.Raw)
	}
	if resp := e.Do("GET", "/v1/webhooks?limit=5", e.Key, nil); resp.Status != 200 {
		t.Errorf("limit=5 = %d: %s", resp.Status, resp.Raw)
	}
}

func futureRFC3339() string { return time.Now().Add(time.Hour).UTC().Format(time.RFC3339) }
