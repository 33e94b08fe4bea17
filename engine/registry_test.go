package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// stub is an engine that only has a name.
type stub struct{ id string }

func (s *stub) ID() string   { return s.id }
func (s *stub) Kind() string { return KindGateway }
func (s *stub) Send(context.Context, Outgoing) (Key, error) {
	return Key{FromMe: true, ID: s.id}, nil
}
func (s *stub) Close() error { return nil }

// remotes is a Remote holding at most one engine per workspace.
type remotes map[string]Engine

func (r remotes) Lookup(_ context.Context, ws string) (Engine, error) {
	if e, ok := r[ws]; ok {
		return e, nil
	}
	return nil, ErrNoEngine
}

func (r remotes) Get(_ context.Context, ws, id string) (Engine, error) {
	if e, ok := r[ws]; ok && e.ID() == id {
		return e, nil
	}
	return nil, ErrDisconnected
}

// The provider's engine (the sandbox) is a workspace's fallback: once a ping has
// made it, a real engine attached here or connected to any replica is still the
// one a send goes through; while the workspace owns an engine that is not
// connected, nothing is picked (the send waits for it); once it owns none, the
// sandbox again.
func TestPickNeverShadowsARealEngine(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	p := NewPresence(redis.NewClient(&redis.Options{Addr: m.Addr()}), time.Minute)
	sandbox := &stub{id: "sandbox-default"}
	r := NewRegistry(p, nil, func(ws string) Engine {
		if ws == "default" {
			return sandbox
		}
		return nil
	})
	far := remotes{}
	r.SetRemote(far)
	owned := map[string]bool{}
	r.SetOwns(func(_ context.Context, ws string) (bool, error) { return owned[ws], nil })
	pick := func(ws string) string {
		t.Helper()
		e, err := r.Pick(ctx, ws)
		if errors.Is(err, ErrNoEngine) {
			return "none"
		}
		if err != nil {
			t.Fatalf("Pick(%s): %v", ws, err)
		}
		return e.ID()
	}

	// A ping: the sandbox is made and held before any real engine exists.
	if _, err := r.Connections(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
		ws   string
		want string
	}{
		{"only the sandbox", func() {}, "default", "sandbox-default"},
		{"a workspace without a provider", func() {}, "acme", "none"},
		{"a gateway created, not yet paired", func() { owned["default"] = true }, "default", "none"},
		{"the gateway paired on another replica", func() { far["default"] = &stub{id: "eng_gateway"} }, "default", "eng_gateway"},
		{"an engine attached to this process", func() { r.Attach(ctx, "default", &stub{id: "eng_local"}) }, "default", "eng_local"},
		{"the local engine leaves", func() { r.Detach(ctx, "default", "eng_local") }, "default", "eng_gateway"},
		{"the gateway disconnects", func() { delete(far, "default") }, "default", "none"},
		{"the gateway is deleted", func() { delete(owned, "default") }, "default", "sandbox-default"},
		{"acme's own engine", func() { far["acme"] = &stub{id: "eng_acme"} }, "acme", "eng_acme"},
		{"acme's engine is not default's", func() {}, "default", "sandbox-default"},
	}
	for _, s := range steps {
		s.do()
		if got := pick(s.ws); got != s.want {
			t.Errorf("%s: Pick(%s) = %s, want %s", s.name, s.ws, got, s.want)
		}
	}
	// Find still reaches the sandbox by its id.
	if e, err := r.Find(ctx, "default", "sandbox-default"); err != nil || e != sandbox {
		t.Errorf("Find(sandbox) = %v, %v", e, err)
	}
}
