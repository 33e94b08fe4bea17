package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/viewer"
)

// Scopes of root and nested fields (docs/scopes.md). Every root field declares the
// scope of what it answers with its @scope directive in the schema (RootScope),
// which the REST route serving the field is behind as well. Below it, every
// GraphQL object type belongs to a resource, and a field that leads into another
// resource (an edge: Message.campaign, Group.chat, Chat.messageConnection) needs
// the read scope of the resource it reaches; a field that carries another
// resource's data (Chat.lastMessageText is message content) needs that resource's
// scope wherever it is read. These checks run on the operation as written, before
// any of it runs (checkScopes), so that a new edge needs no code of its own: its
// type says what it reaches.

// resourceScopes are the resources of the schema and the scope that reads each.
var resourceScopes = map[string]string{
	"Account":         switchboard.ScopeAccountRead,
	"APIKey":          switchboard.ScopeKeysRead,
	"Audience":        switchboard.ScopeAudiencesRead,
	"AudienceContact": switchboard.ScopeAudiencesRead,
	"Board":           switchboard.ScopeBoardsRead,
	"BoardItem":       switchboard.ScopeBoardsRead,
	"Campaign":        switchboard.ScopeCampaignsRead,
	"Chat":            scopeReadStore,
	"Contact":         switchboard.ScopeContactsRead,
	"Delivery":        switchboard.ScopeWebhooksRead,
	"DeliveryAttempt": switchboard.ScopeWebhooksRead,
	"Engine":          switchboard.ScopeEnginesRead,
	"Group":           switchboard.ScopeGroupsRead,
	// The message store; the queue (scheduledMessages) is read with messages:read
	// at its root fields and through Campaign.messages (edgeScopes).
	"Message":      scopeReadStore,
	"MusicAccount": switchboard.ScopeMusicRead,
	"MusicClip":    switchboard.ScopeMusicRead,
	// The account's own profile (docs/profile.md).
	"Profile": switchboard.ScopeProfileRead,
	// What the store holds of the message a reply quotes: store content.
	"QuotedMessage": scopeReadStore,
	// Statuses, the account's and its contacts' (docs/status.md).
	"Status":  switchboard.ScopeStatusRead,
	"Webhook": switchboard.ScopeWebhooksRead,
}

// typeParts names the resource of every other object type: a payload or report
// that a root field answers with is part of the resource it carries; a value
// ("") is read with whatever reached it and leads nowhere. XConnection, XEdge and
// XPage are part of X and need no entry. The schema test fails for a type that is
// in neither map, so a new type is classified when it is added.
var typeParts = map[string]string{
	"APIKeyCreated":           "APIKey",
	"BlockedContacts":         "Contact",
	"NumberCheckResult":       "Contact",
	"NumberStatus":            "Contact",
	"NewsletterPreview":       "Chat",
	"AudienceContactsPayload": "Audience",
	"BoardItemPayload":        "BoardItem",
	"BoardMergeReport":        "BoardItem",
	"ContactDetails":          "Contact",
	"CreateWebhookPayload":    "Webhook",
	"DisappearingTimer":       "Chat",
	"EngineCreated":           "Engine",
	"GroupResult":             "Group",
	"GroupInvite":             "Group",
	"GroupInvitePreview":      "Group",
	"GroupJoinRequest":        "Group",
	"JoinRequestResult":       "Group",
	"JoinRequestAnswer":       "Group",
	"GroupCommunity":          "Group",
	"CommunitySubGroup":       "Group",
	"LatestChat":              "Chat",
	"LatestChats":             "Chat",
	"ScheduleMessagePayload":  "Message",
	"SimilarItem":             "BoardItem",
	"SimilarItems":            "BoardItem",
	"SongJob":                 "MusicClip",

	"AudienceVariable":    "",
	"Call":                "",
	"BusinessHours":       "",
	"BusinessProfile":     "",
	"BoardCell":           "",
	"BoardColumn":         "",
	"BoardOption":         "",
	"BoardSource":         "",
	"CampaignPacing":      "",
	"ContactCard":         "",
	"CampaignProgress":    "",
	"Coverage":            "",
	"DeletePayload":       "",
	"EngineConnection":    "",
	"FailedParticipant":   "",
	"LinkPreview":         "",
	"LoadOlderResult":     "",
	"Location":            "",
	"MessageAck":          "",
	"MessageKey":          "",
	"MessageMedia":        "",
	"MusicUploadResult":   "",
	"PageInfo":            "",
	"Participant":         "",
	"Ping":                "",
	"QuietHours":          "",
	"RotateSecretPayload": "",
}

// edgeScopes are the edges that reach a resource through another view of it, and
// the scope of that view: a campaign's messages are queue messages, which REST
// lists at /v1/scheduled-messages under messages:read.
var edgeScopes = map[string]string{
	"Campaign.messages": switchboard.ScopeMessagesRead,
}

// fieldData names the fields that carry another resource's data, and that
// resource: the chat's last message is message content, which newsletterList,
// commonGroups or Group.chat would otherwise hand to a key without chats:read.
var fieldData = map[string]string{
	"Chat.lastMessageText":   "Message",
	"Chat.lastMessageFromMe": "Message",
}

// ResourceOf returns the resource an object type belongs to ("" for a value type)
// and whether the type is classified at all.
func ResourceOf(typeName string) (string, bool) {
	if _, ok := resourceScopes[typeName]; ok {
		return typeName, true
	}
	if r, ok := typeParts[typeName]; ok {
		return r, true
	}
	for _, suffix := range []string{"Connection", "Edge", "Page"} {
		if base, ok := strings.CutSuffix(typeName, suffix); ok && base != "" {
			if r, ok := ResourceOf(base); ok {
				return r, true
			}
		}
	}
	return "", false
}

// ResourceScope returns the scope that reads resource ("" for none).
func ResourceScope(resource string) string { return resourceScopes[resource] }

// EdgeScope returns the scope a key needs to follow field of typeName into
// resource, a resource other than the one the field is read in.
func EdgeScope(typeName, field, resource string) string {
	if s, ok := edgeScopes[typeName+"."+field]; ok {
		return s
	}
	return resourceScopes[resource]
}

// DataScope returns the scope a key needs to read field of typeName wherever it
// is read, for a field that carries another resource's data ("" for the others).
func DataScope(typeName, field string) string {
	if r, ok := fieldData[typeName+"."+field]; ok {
		return resourceScopes[r]
	}
	return ""
}

// scopeDirective names the directive that declares the scope of a root field:
// @scope(needs: "chats:read"); needs "" asks only for a valid key.
const scopeDirective = "scope"

// DeclaredScope returns the scope f's @scope directive declares and whether f
// has one.
func DeclaredScope(f *ast.FieldDefinition) (string, bool) {
	d := f.Directives.ForName(scopeDirective)
	if d == nil {
		return "", false
	}
	a := d.Arguments.ForName("needs")
	if a == nil || a.Value == nil || a.Value.Kind != ast.StringValue {
		return "", false
	}
	return a.Value.Raw, true
}

// rootScopes maps the name of every Query and Mutation field to its declared
// scope, read once from the executable schema.
var rootScopes = sync.OnceValue(func() map[string]string {
	s := NewExecutableSchema(Config{}).Schema()
	m := map[string]string{}
	for _, root := range []*ast.Definition{s.Query, s.Mutation} {
		for _, f := range root.Fields {
			if scope, ok := DeclaredScope(f); ok {
				m[f.Name] = scope
			}
		}
	}
	return m
})

// RootScope returns the scope the Query or Mutation field name needs ("" for
// any valid key), as its @scope directive declares it, and whether the schema
// has such a field. The REST facade serves each route behind the scope of the
// root field it serves.
func RootScope(name string) (string, bool) {
	scope, ok := rootScopes()[name]
	return scope, ok
}

// scopeWalk checks the fields of one operation against the scopes of a viewer.
type scopeWalk struct {
	schema *ast.Schema
	ctx    context.Context
	v      viewer.Viewer
}

// checkScopes refuses op, before any of it runs, when the viewer in ctx lacks the
// scope of a root field (its @scope) or of a field below one: an edge into
// another resource or a field carrying another resource's data (see
// resourceScopes). The error names the field and the scope; without a valid
// viewer it is EUNAUTHORIZED.
func checkScopes(ctx context.Context, schema *ast.Schema, op *ast.OperationDefinition) *gqlerror.Error {
	v, _ := viewer.FromContext(ctx)
	return scopeWalk{schema: schema, ctx: ctx, v: v}.root(op.SelectionSet, nil)
}

// root walks the root fields: each needs the scope it declares, and then answers
// the resource it returns without a further check.
func (w scopeWalk) root(set ast.SelectionSet, path ast.Path) *gqlerror.Error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") || s.Definition == nil {
				continue
			}
			if err := w.rootField(s, with(path, s.Alias)); err != nil {
				return err
			}
			res, _ := ResourceOf(s.Definition.Type.Name())
			// Under an interface (node, nodes), a fragment's type is what the root
			// field answers, which its resolver checks against the id's type.
			open := res == "" && w.abstract(s.Definition.Type.Name())
			if err := w.walk(s.SelectionSet, res, open, with(path, s.Alias)); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := w.root(s.SelectionSet, path); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if s.Definition != nil {
				if err := w.root(s.Definition.SelectionSet, path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rootField refuses root field f unless the viewer holds the scope it declares:
// EFORBIDDEN naming the scope and the field, or viewer.Require's EUNAUTHORIZED
// without a valid viewer, at the field's path and location. A field without
// @scope, which the schema test forbids, is refused to every key.
func (w scopeWalk) rootField(f *ast.Field, at ast.Path) *gqlerror.Error {
	scope, ok := DeclaredScope(f.Definition)
	what := f.ObjectDefinition.Name + "." + f.Name
	if !ok {
		return withPlace(switchboard.Errorf(switchboard.EINTERNAL, "%s declares no scope.", what), at, f.Position)
	}
	if _, err := viewer.Require(w.ctx, scope); err != nil {
		var e *switchboard.Error
		if errors.As(err, &e) && e.Code == switchboard.EFORBIDDEN {
			return scopeError(scope, what, "use", at, f.Position)
		}
		return withPlace(err, at, f.Position)
	}
	return nil
}

// walk checks set, read within resource current. open is true right under a root
// field of an interface type, where a fragment names the resource answered.
func (w scopeWalk) walk(set ast.SelectionSet, current string, open bool, path ast.Path) *gqlerror.Error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") || s.Definition == nil || s.ObjectDefinition == nil {
				continue
			}
			at := with(path, s.Alias)
			parent := s.ObjectDefinition.Name
			if scope := DataScope(parent, s.Name); scope != "" && !w.v.Can(scope) {
				return scopeError(scope, parent+"."+s.Name, "read", at, s.Position)
			}
			next := current
			if res, _ := ResourceOf(s.Definition.Type.Name()); res != "" && res != current {
				if scope := EdgeScope(parent, s.Name, res); !w.v.Can(scope) {
					return scopeError(scope, parent+"."+s.Name, "read", at, s.Position)
				}
				next = res
			}
			if err := w.walk(s.SelectionSet, next, false, at); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := w.fragment(s.TypeCondition, s.SelectionSet, s.Position, current, open, path); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if s.Definition != nil {
				if err := w.fragment(s.Definition.TypeCondition, s.Definition.SelectionSet, s.Position, current, open, path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// fragment walks a fragment on typeCondition. Only under an interface can a
// fragment enter another resource: right under a root field (node, nodes), the
// one answered; below (the schema has no such field now), it needs that
// resource's scope.
func (w scopeWalk) fragment(typeCondition string, set ast.SelectionSet, pos *ast.Position, current string, open bool, path ast.Path) *gqlerror.Error {
	next := current
	if res, _ := ResourceOf(typeCondition); res != "" && res != current {
		if scope := resourceScopes[res]; !open && !w.v.Can(scope) {
			return scopeError(scope, "fragment on "+typeCondition, "read", path, pos)
		}
		next = res
	}
	return w.walk(set, next, open && next == "", path)
}

// abstract reports whether name is an interface or a union.
func (w scopeWalk) abstract(name string) bool {
	d := w.schema.Types[name]
	return d != nil && (d.Kind == ast.Interface || d.Kind == ast.Union)
}

// with returns path and name, leaving path's array alone.
func with(path ast.Path, name string) ast.Path {
	return append(path[:len(path):len(path)], ast.PathName(name))
}

// scopeError is the EFORBIDDEN error of reading (or using) what (Type.field)
// with a key lacking scope, worded as viewer.Require words it.
func scopeError(scope, what, verb string, path ast.Path, pos *ast.Position) *gqlerror.Error {
	return withPlace(&switchboard.Error{
		Code:    switchboard.EFORBIDDEN,
		Message: fmt.Sprintf("The API key lacks the required scope %s to %s %s.", scope, verb, what),
		Details: []switchboard.Detail{{Path: "scope", Code: "missing_scope", Message: scope}},
	}, path, pos)
}

// withPlace is err as the GraphQL error of the field at path and pos.
func withPlace(err error, path ast.Path, pos *ast.Position) *gqlerror.Error {
	var locs []gqlerror.Location
	if pos != nil {
		locs = []gqlerror.Location{{Line: pos.Line, Column: pos.Column}}
	}
	return &gqlerror.Error{Err: err, Message: switchboard.ErrorMessage(err), Path: path, Locations: locs}
}
