package graph

import (
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/apikey"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/viewer"
)

const (
	maxKeyName   = 100
	maxKeyPrefix = 64
)

// apiKeyList is the use case behind apiKeyList: the workspace's keys, newest first.
func (r *Resolver) apiKeyList(ctx context.Context, prefix *string, limit, skip *int) (*model.APIKeyPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	q := r.Client.APIKey.Query()
	if prefix != nil && *prefix != "" {
		if len(*prefix) > maxKeyPrefix {
			var p switchboard.Problems
			p.Add("prefix", "too_big", "prefix must be at most %d characters", maxKeyPrefix)
			return nil, p.Err(switchboard.EINVALID)
		}
		q.Where(apikey.PrefixHasPrefix(*prefix))
	}
	rows, total, err := find(ctx, q.Clone().Count, q.Order(ent.Desc(apikey.FieldCreatedAt), ent.Desc(apikey.FieldID)).Limit(l).Offset(s).All)
	if err != nil {
		return nil, err
	}
	return &model.APIKeyPage{Items: rows, Limit: l, Skip: s, Total: total}, nil
}

// grantableScopes is the use case behind grantableScopes.
func (r *Resolver) grantableScopes(ctx context.Context) ([]string, error) {
	v, _ := viewer.FromContext(ctx)
	out := []string{}
	for _, s := range append([]string{switchboard.ScopeAll}, switchboard.KnownScopes...) {
		if mayGrant(v, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// mayGrant reports whether v may give scope to a key it creates: * needs *
// itself; every other scope must be granted to v.
func mayGrant(v viewer.Viewer, scope string) bool {
	if scope == switchboard.ScopeAll {
		return slices.Contains(v.Scopes, switchboard.ScopeAll)
	}
	return v.Can(scope)
}

// createAPIKey is the use case behind createApiKey. A key never grants more than
// its creator holds: * needs *, and every other scope must be granted to the
// caller (operator, which * does not grant, needs operator itself).
func (r *Resolver) createAPIKey(ctx context.Context, in model.APIKeyInput) (*model.APIKeyCreated, error) {
	v, _ := viewer.FromContext(ctx)
	name := ""
	if in.Name != nil {
		name = *in.Name
	}
	var p switchboard.Problems
	if utf8.RuneCountInString(name) > maxKeyName {
		p.Add("name", "too_big", "name must be at most %d characters", maxKeyName)
	}
	if err := auth.CheckScopes(in.Scopes); err != nil {
		p = append(p, switchboard.ErrorDetails(err)...)
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	var scopes []string
	var denied switchboard.Problems
	for i, s := range in.Scopes {
		if !mayGrant(v, s) {
			denied.Add(fmt.Sprintf("scopes[%d]", i), "missing_scope", "%s: a key can only grant scopes its creator holds", s)
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if err := denied.Err(switchboard.EFORBIDDEN); err != nil {
		return nil, err
	}
	issued, err := auth.IssueKey(ctx, r.Client, v.WorkspaceID, scopes, name)
	if err != nil {
		return nil, err
	}
	return &model.APIKeyCreated{Key: issued.Key, APIKey: issued.Record}, nil
}

// revokeAPIKey is the use case behind revokeApiKey. A key may revoke only a key
// it could have created: one whose every scope it may grant (mayGrant), so a
// keys:write key cannot take the workspace's * key away. Revoking a revoked key
// answers it as it is.
func (r *Resolver) revokeAPIKey(ctx context.Context, id string) (*ent.APIKey, error) {
	v, _ := viewer.FromContext(ctx)
	row, err := r.Client.APIKey.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, notFound("id", "No API key with id %s.", quote(id))
	} else if err != nil {
		return nil, err
	}
	var denied switchboard.Problems
	for i, s := range row.Scopes {
		if !mayGrant(v, s) {
			denied.Add(fmt.Sprintf("scopes[%d]", i), "missing_scope", "%s: a key can only revoke keys whose scopes it holds", s)
		}
	}
	if err := denied.Err(switchboard.EFORBIDDEN); err != nil {
		return nil, err
	}
	if row.RevokedAt != nil {
		return row, nil
	}
	now := r.now()
	if err := r.Client.APIKey.Update().Where(apikey.ID(row.ID), apikey.RevokedAtIsNil()).SetRevokedAt(now).Exec(ctx); err != nil {
		return nil, err
	}
	row.RevokedAt = &now
	if r.Keys != nil {
		r.Keys.Revoked(ctx, row.Hash)
	}
	return row, nil
}
