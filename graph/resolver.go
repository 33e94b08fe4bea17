// Package graph is the application core: the GraphQL schema and its resolvers. Each
// use case lives in one resolver method; the REST facade in package rest calls the
// same methods, so both transports share one implementation. The scope of each
// root field is declared by its @scope directive in the schema and checked by the
// transport before a resolver runs (checkScopes for GraphQL, the route's check
// for REST), so resolvers do not check it again.
package graph

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/ent/audience"
	"github.com/switchboardhq/switchboard/ent/audiencecontact"
	"github.com/switchboardhq/switchboard/ent/board"
	"github.com/switchboardhq/switchboard/ent/boarditem"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/contact"
	"github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/ent/deliveryattempt"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/webhook"
	"github.com/switchboardhq/switchboard/ent/workspace"
	"github.com/switchboardhq/switchboard/viewer"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/music"
)

// Gateways runs gateway engines (host.Host).
type Gateways interface {
	// Start runs the gateway engine of row, unless a replica runs it already.
	Start(ctx context.Context, row *ent.Engine) error
}

// Redeliverer makes a new delivery of the event behind a delivery, to the same
// webhook, and queues it.
type Redeliverer interface {
	Redeliver(ctx context.Context, d *ent.Delivery) (*ent.Delivery, error)
}

// Resolver is the root resolver and holds the dependencies of every use case.
type Resolver struct {
	Client *ent.Client
	// Keys authenticates API keys; a revocation is announced through it to every
	// replica. Nil: revocations reach the other replicas within their key TTL.
	Keys    *auth.Keys
	Engines *engine.Registry
	// Sessions ends engine sessions on every replica (a deleted or logged-out
	// engine's); nil ends them in this process only.
	Sessions engine.Sessions
	// Gateways runs gateway engines: a new one starts at once on this replica.
	// Nil: gateway engines cannot be created.
	Gateways Gateways
	Queue    *jobs.Queue
	Media    *media.Store
	// Dispatcher sends a direct send's message (see sendNow).
	Dispatcher *dispatch.Dispatcher
	// Music generates songs (nil: music is not configured); MusicFiles keeps
	// reference recordings and finished songs on disk.
	Music      music.Provider
	MusicFiles *music.Files
	// MusicMaxUpload bounds a reference recording (music.DefaultMaxUpload when zero).
	MusicMaxUpload int64
	// AllowPrivate lets webhook URLs use http and point at private addresses.
	AllowPrivate bool
	// MediaAllowPrivate lets a mediaUrl point at a private address.
	MediaAllowPrivate bool
	// PublicURL is the base of the links into Switchboard's own UI (a board's web_url).
	PublicURL string
	// LoadOlderPace is the wait between two pages of one load-older call;
	// DefaultLoadOlderPace when nil.
	LoadOlderPace *time.Duration
	// SendLimit bounds the direct sends through each engine; nil for none.
	SendLimit *SendLimit
	// MediaRetryPace is the wait between two media download attempts while the
	// engine is still fetching; DefaultMediaRetryPace when zero.
	MediaRetryPace time.Duration
	// Deliveries redelivers webhook deliveries (a *delivery.Service).
	Deliveries Redeliverer
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Inbox stores what engines report; a read of the conversation store waits
	// on it for what was reported before the read (settle).
	Inbox *inbox.Inbox
}

func (r *Resolver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// scopeReadStore reads the message store (message, messages, node: GET
// /v1/messages/{id}): chats:read, because it holds every chat's messages,
// incoming ones included. The queue (scheduledMessages) needs messages:read.
const scopeReadStore = switchboard.ScopeChatsRead

// nodeType resolves the table of a global id from its prefix (see switchboard.NewID)
// and checks that the viewer holds the scope that reads it. This check stays in
// code: node and nodes declare only @scope(needs: ""), because the scope they need
// depends on the ids they are given, which the operation's check cannot see.
func nodeType(ctx context.Context, id string) (string, error) {
	var table, scope string
	switch prefix, _, _ := strings.Cut(id, "_"); prefix {
	case "msg":
		table, scope = message.Table, scopeReadStore
	case "cht":
		table, scope = chat.Table, scopeReadStore
	case "cnt":
		table, scope = contact.Table, switchboard.ScopeContactsRead
	case "wh":
		table, scope = webhook.Table, switchboard.ScopeWebhooksRead
	case "dlv":
		table, scope = delivery.Table, switchboard.ScopeWebhooksRead
	case "att":
		table, scope = deliveryattempt.Table, switchboard.ScopeWebhooksRead
	case "brd":
		table, scope = board.Table, switchboard.ScopeBoardsRead
	case "itm":
		table, scope = boarditem.Table, switchboard.ScopeBoardsRead
	case "aud":
		table, scope = audience.Table, switchboard.ScopeAudiencesRead
	case "acn":
		table, scope = audiencecontact.Table, switchboard.ScopeAudiencesRead
	case "cmp":
		table, scope = campaign.Table, switchboard.ScopeCampaignsRead
	case "ws":
		if id == viewerWorkspace(ctx) { // workspaces are not tenant rows: only one's own
			table, scope = workspace.Table, switchboard.ScopeAccountRead
		}
	}
	if table == "" {
		return "", switchboard.Errorf(switchboard.ENOTFOUND, "No node with id %s.", quote(id))
	}
	if _, err := viewer.Require(ctx, scope); err != nil {
		return "", err
	}
	return table, nil
}

// viewerWorkspace is the workspace of the viewer in ctx (resolvers run after the
// transport checked their root field's scope, which needs a valid viewer).
func viewerWorkspace(ctx context.Context) string {
	v, _ := viewer.FromContext(ctx)
	return v.WorkspaceID
}
