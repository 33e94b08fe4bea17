package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The published Standard Webhooks example, computed by their reference code.
func TestSignMatchesStandardWebhooksVector(t *testing.T) {
	got, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if err != nil || got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Errorf("Sign = %q, %v", got, err)
	}
}

func TestSenderCapsResponseBodyAndRefusesPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
	}))
	defer srv.Close()
	req := Request{URL: srv.URL, WebhookID: "wh_1", DeliveryID: "dlv_1", Payload: []byte(`{}`), Secrets: []string{NewSecret()}}
	res := NewSender(true).Send(context.Background(), req)
	if res.StatusCode != 500 || len(res.Body) != MaxResponseBody || res.OK() {
		t.Errorf("result = %d, %d body bytes, ok=%v", res.StatusCode, len(res.Body), res.OK())
	}
	res = NewSender(false).Send(context.Background(), req)
	if res.OK() || !strings.Contains(res.Err, "private") {
		t.Errorf("guarded sender reached loopback: %+v", res)
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ok", "ok"},
		{"nul\x00byte", "nul\uFFFDbyte"},
		{"cut \xc3", "cut \uFFFD"},
		{"\xff\xfe", "\uFFFD"},
		{"héllo", "héllo"},
	}
	for _, tt := range tests {
		if got := Excerpt([]byte(tt.in)); got != tt.want {
			t.Errorf("Excerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
