package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestIsPublic(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"8.8.8.8", true}, {"2606:4700::1111", true},
		{"127.0.0.1", false}, {"10.1.2.3", false}, {"172.16.0.1", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false}, {"::1", false},
		{"fe80::1", false}, {"fc00::1", false}, {"::ffff:127.0.0.1", false}, {"224.0.0.1", false},
		// IPv6 forms that embed (or route to) an internal IPv4 or site.
		{"::a9fe:a9fe", false},                          // ::169.254.169.254, IPv4-compatible
		{"::7f00:1", false},                             // ::127.0.0.1
		{"2002:a9fe:a9fe::1", false},                    // 6to4 of 169.254.169.254
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, // Teredo
		{"fec0::1", false},                              // site-local
		{"2001:4860:4860::8888", true},
	}
	for _, tt := range tests {
		if got := IsPublic(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("IsPublic(%s) = %v, want %v", tt.ip, got, tt.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		url     string
		private bool
		ok      bool
	}{
		{"https://93.184.216.34/hook", false, true},
		{"http://93.184.216.34/hook", false, false},
		{"https://127.0.0.1/hook", false, false},
		{"https://[::1]/hook", false, false},
		{"https://169.254.169.254/latest", false, false},
		{"https://localhost/x", false, false},
		{"https://LOCALHOST./x", false, false},
		{"https://api.localhost./x", false, false},
		{"https://[::169.254.169.254]/latest", false, false},
		{"https://[2002:7f00:1::]/x", false, false},
		{"https://[fec0::1]/x", false, false},
		{"https://name-that-does-not-resolve.invalid/x", false, false},
		{"https://user:pw@93.184.216.34/", false, false},
		{"not a url", false, false},
		{"https://127.0.0.1/hook", true, true},
	}
	for _, tt := range tests {
		if err := CheckURL(ctx, tt.url, false, tt.private); (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q, private=%v) = %v, want ok=%v", tt.url, tt.private, err, tt.ok)
		}
	}
}

func TestClientRefusesLoopbackAtConnect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, err := Client(2*time.Second, false).Get(srv.URL)
	if !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("guarded client reached loopback: %v", err)
	}
	resp, err := Client(2*time.Second, true).Get(srv.URL)
	if err != nil {
		t.Fatalf("unguarded client: %v", err)
	}
	resp.Body.Close()
}
