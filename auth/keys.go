// Package auth issues and checks API keys. A key is "sb_live_" followed by 192
// random bits; only its SHA-256 is stored, looked up through a unique index.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/apikey"
	"github.com/switchboardhq/switchboard/ent/workspace"
	"github.com/switchboardhq/switchboard/viewer"
)

// KeyPrefix starts every key.
const KeyPrefix = "sb_live_"

// maxKeyLen bounds what is taken for a key.
const maxKeyLen = 128

// shownChars is how much of a key may appear in lists and logs.
const shownChars = len(KeyPrefix) + 4

// Hash returns the stored form of a key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Redact returns the part of a key that may be shown or logged.
func Redact(key string) string {
	if len(key) <= shownChars {
		return strings.Repeat("*", len(key))
	}
	return key[:shownChars] + "…"
}

// Authenticate returns the viewer of a presented key, or EUNAUTHORIZED whose message
// says whether the key is missing, malformed, unknown or revoked.
func Authenticate(ctx context.Context, client *ent.Client, key string) (viewer.Viewer, error) {
	if key == "" {
		return viewer.Viewer{}, switchboard.Errorf(switchboard.EUNAUTHORIZED, "Missing API key: send Authorization: Bearer <API_KEY>.")
	}
	if !strings.HasPrefix(key, KeyPrefix) || len(key) > maxKeyLen {
		return viewer.Viewer{}, switchboard.Errorf(switchboard.EUNAUTHORIZED, "Malformed API key: keys look like %s<opaque>.", KeyPrefix)
	}
	return AuthenticateHash(ctx, client, Hash(key))
}

// AuthenticateHash is Authenticate for the stored form of a key (Hash), which a
// dashboard session keeps instead of the key.
func AuthenticateHash(ctx context.Context, client *ent.Client, hash string) (viewer.Viewer, error) {
	k, err := client.APIKey.Query().Where(apikey.Hash(hash)).Only(viewer.SystemContext(ctx))
	if ent.IsNotFound(err) {
		return viewer.Viewer{}, switchboard.Errorf(switchboard.EUNAUTHORIZED, "Unknown API key.")
	} else if err != nil {
		return viewer.Viewer{}, fmt.Errorf("auth: look up key: %w", err)
	}
	if k.RevokedAt != nil {
		return viewer.Viewer{}, switchboard.Errorf(switchboard.EUNAUTHORIZED, "The API key has been revoked.")
	}
	return viewer.Viewer{WorkspaceID: k.WorkspaceID, KeyID: k.ID, Scopes: k.Scopes}, nil
}

// Issued is a newly created key: the secret (shown once) and its record.
type Issued struct {
	Key    string
	Record *ent.APIKey
}

// CreateKey issues a key with scopes in the workspace named workspaceName, creating
// the workspace when it does not exist.
func CreateKey(ctx context.Context, client *ent.Client, workspaceName string, scopes []string, name string) (*Issued, error) {
	if err := CheckScopes(scopes); err != nil {
		return nil, err
	}
	ws, err := EnsureWorkspace(ctx, client, workspaceName)
	if err != nil {
		return nil, err
	}
	return IssueKey(ctx, client, ws.ID, scopes, name)
}

// CheckScopes returns a 422 naming the scopes a key cannot be created with: none,
// or ones no key can hold.
func CheckScopes(scopes []string) error {
	var p switchboard.Problems
	if len(scopes) == 0 {
		p.Add("scopes", "too_small", "at least one scope is required")
	}
	for i, s := range scopes {
		if !switchboard.IsKnownScope(s) {
			p.Add(fmt.Sprintf("scopes[%d]", i), "invalid_enum_value", "unknown scope %q (known: *, %s)", s, strings.Join(switchboard.KnownScopes, ", "))
		}
	}
	return p.Err(switchboard.EVALIDATION)
}

// IssueKey creates a key with scopes (checked by CheckScopes) in the workspace
// with id workspaceID.
func IssueKey(ctx context.Context, client *ent.Client, workspaceID string, scopes []string, name string) (*Issued, error) {
	key := KeyPrefix + switchboard.RandomToken(24)
	rec, err := client.APIKey.Create().SetWorkspaceID(workspaceID).SetName(name).
		SetPrefix(key[:shownChars]).SetHash(Hash(key)).SetScopes(scopes).Save(viewer.SystemContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("auth: create key: %w", err)
	}
	return &Issued{Key: key, Record: rec}, nil
}

// EnsureWorkspace returns the workspace named name, creating it if missing.
func EnsureWorkspace(ctx context.Context, client *ent.Client, name string) (*ent.Workspace, error) {
	ctx = viewer.SystemContext(ctx)
	if name == "" {
		return nil, switchboard.Errorf(switchboard.EVALIDATION, "a workspace name is required")
	}
	ws, err := client.Workspace.Query().Where(workspace.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		ws, err = client.Workspace.Create().SetName(name).Save(ctx)
		if ent.IsConstraintError(err) { // created concurrently
			ws, err = client.Workspace.Query().Where(workspace.Name(name)).Only(ctx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("auth: workspace %q: %w", name, err)
	}
	return ws, nil
}

// RevokeKey revokes the key given as its secret or its id.
func RevokeKey(ctx context.Context, client *ent.Client, keyOrID string) (*ent.APIKey, error) {
	ctx = viewer.SystemContext(ctx)
	q := client.APIKey.Query()
	if strings.HasPrefix(keyOrID, KeyPrefix) {
		q = q.Where(apikey.Hash(Hash(keyOrID)))
	} else {
		q = q.Where(apikey.ID(keyOrID))
	}
	k, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no such key")
	} else if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil {
		return k, nil
	}
	return k.Update().SetRevokedAt(time.Now()).Save(ctx)
}

// ListKeys returns every key with its workspace, newest first.
func ListKeys(ctx context.Context, client *ent.Client) ([]*ent.APIKey, error) {
	return client.APIKey.Query().Order(ent.Desc(apikey.FieldCreatedAt)).All(viewer.SystemContext(ctx))
}
