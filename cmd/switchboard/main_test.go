package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestKeysCommands(t *testing.T) {
	ctx := context.Background()
	db := "sqlite://" + t.TempDir() + "/keys.db"
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"keys", "create", "--database-url", db, "--workspace", "acme", "--scopes", "messages:read,messages:write", "--name", "ci"}, &out, &errOut); err != nil {
		t.Fatalf("create: %v", err)
	}
	key := strings.TrimSpace(out.String())
	if !strings.HasPrefix(key, "sb_live_") || strings.Contains(key, "\n") || len(key) < 40 {
		t.Fatalf("create printed %q, want only the key", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"keys", "list", "--database-url", db}, &out, &errOut); err != nil {
		t.Fatalf("list: %v", err)
	}
	if strings.Contains(out.String(), key) || !strings.Contains(out.String(), key[:12]) || !strings.Contains(out.String(), "messages:read,messages:write") {
		t.Errorf("list must show the prefix and scopes, never the key:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "  acme  ") {
		t.Errorf("list must show the workspace's name:\n%s", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"keys", "revoke", key, "--database-url", db}, &out, &errOut); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	out.Reset()
	_ = run(ctx, []string{"keys", "list", "--database-url", db}, &out, &errOut)
	if strings.Contains(out.String(), "\t-\n") || !strings.Contains(out.String(), "Z\n") {
		t.Errorf("revoked key not shown as revoked:\n%s", out.String())
	}

	if err := run(ctx, []string{"keys", "create", "--database-url", db, "--workspace", "acme", "--scopes", "everything"}, &out, &errOut); err == nil {
		t.Errorf("unknown scope accepted")
	}
	if err := run(ctx, []string{"migrate", "--database-url", db}, &out, &errOut); err != nil {
		t.Errorf("migrate: %v", err)
	}
	if err := run(ctx, []string{"frobnicate"}, &out, &errOut); err == nil {
		t.Errorf("unknown command accepted")
	}
}
