package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// Engine is a remote engine as Switchboard uses it, on any replica: each method
// is one command carried to the engine's socket wherever it is. It implements
// every engine interface the protocol carries; a method of a capability the
// engine did not announce answers engine_unavailable without asking it.
type Engine struct {
	hub         *Hub
	id          string
	workspaceID string
	kind        string
	caps        []string
	features    []string // the protocol features the engine announced
	restriction string
	qr          string // the pairing QR the engine last reported, if pairing
}

var (
	_ engine.Engine            = (*Engine)(nil)
	_ engine.BatchSender       = (*Engine)(nil)
	_ engine.HistorySyncer     = (*Engine)(nil)
	_ engine.HistoryLoader     = (*Engine)(nil)
	_ engine.ChatActor         = (*Engine)(nil)
	_ engine.MediaFetcher      = (*Engine)(nil)
	_ engine.Typist            = (*Engine)(nil)
	_ engine.ChatPresencer     = (*Engine)(nil)
	_ engine.Editor            = (*Engine)(nil)
	_ engine.Revoker           = (*Engine)(nil)
	_ engine.NewsletterCreator = (*Engine)(nil)
	_ engine.GroupAdmin        = (*Engine)(nil)
	_ engine.Pairer            = (*Engine)(nil)
	_ engine.LoggerOut         = (*Engine)(nil)
	_ engine.Restarter         = (*Engine)(nil)
	_ engine.Restrictor        = (*Engine)(nil)
	_ engine.Profiler          = (*Engine)(nil)
	_ engine.CallRejecter      = (*Engine)(nil)
)

// Restriction implements engine.Restrictor: what the replica running the engine
// last said of its account's restriction (at most a third of the presence TTL
// old).
func (e *Engine) Restriction() (string, bool) { return e.restriction, e.restriction != "" }

// ID implements engine.Engine.
func (e *Engine) ID() string { return e.id }

// Kind implements engine.Engine: what the engine said it is in its hello.
func (e *Engine) Kind() string { return e.kind }

// Capabilities lists what the engine announced it serves.
func (e *Engine) Capabilities() []string { return slices.Clone(e.caps) }

// Close implements engine.Engine. The socket is the engine's: closing the
// handle does nothing.
func (e *Engine) Close() error { return nil }

// invoke runs method on the engine with args and decodes its results into out.
func (e *Engine) invoke(ctx context.Context, method string, out []any, args ...any) error {
	if capability := methodCapability[method]; !slices.Contains(e.caps, capability) {
		return switchboard.Errorf(switchboard.ENOENGINE, "The connected engine cannot do that (it does not serve %s).", capability)
	}
	if args == nil {
		args = []any{}
	}
	for i, a := range args {
		if d, ok := a.(time.Duration); ok {
			args[i] = d.Milliseconds() // durations travel in whole milliseconds
		}
	}
	params, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res, err := e.hub.command(ctx, e.id, method, params)
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(res, &raw); err != nil || len(raw) != len(out) {
		return fmt.Errorf("remote engine: bad result of %s", method)
	}
	for i := range out {
		if d, ok := out[i].(*time.Duration); ok {
			var ms int64
			if err := json.Unmarshal(raw[i], &ms); err != nil {
				return fmt.Errorf("remote engine: bad result %d of %s: %w", i, method, err)
			}
			*d = time.Duration(ms) * time.Millisecond
			continue
		}
		if err := json.Unmarshal(raw[i], out[i]); err != nil {
			return fmt.Errorf("remote engine: bad result %d of %s: %w", i, method, err)
		}
	}
	return nil
}

// Send implements engine.Engine.
func (e *Engine) Send(ctx context.Context, m engine.Outgoing) (k engine.Key, err error) {
	return k, e.invoke(ctx, "Send", []any{&k}, m)
}

// SendBatch implements engine.BatchSender; an engine without send_batch gets
// one Send each.
func (e *Engine) SendBatch(ctx context.Context, ms []engine.Outgoing) []engine.Sent {
	out := make([]engine.Sent, len(ms))
	if !slices.Contains(e.caps, "send_batch") {
		for i, m := range ms {
			out[i].Key, out[i].Err = e.Send(ctx, m)
		}
		return out
	}
	var sent []sentWire
	if err := e.invoke(ctx, "SendBatch", []any{&sent}, ms); err != nil || len(sent) != len(ms) {
		if err == nil {
			err = fmt.Errorf("remote engine: SendBatch answered %d of %d", len(sent), len(ms))
		}
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	for i, s := range sent {
		out[i] = engine.Sent{Key: s.Key, Err: s.Error.Err()}
	}
	return out
}

// SyncHistory implements engine.HistorySyncer.
func (e *Engine) SyncHistory(ctx context.Context) (reported bool, err error) {
	return reported, e.invoke(ctx, "SyncHistory", []any{&reported})
}

// LoadOlder implements engine.HistoryLoader.
func (e *Engine) LoadOlder(ctx context.Context, chatID string, before time.Time) (p engine.HistoryPage, err error) {
	return p, e.invoke(ctx, "LoadOlder", []any{&p}, chatID, before)
}

// MarkRead implements engine.ChatActor.
func (e *Engine) MarkRead(ctx context.Context, chatID string) error {
	return e.invoke(ctx, "MarkRead", nil, chatID)
}

// SetArchived implements engine.ChatActor.
func (e *Engine) SetArchived(ctx context.Context, chatID string, archived bool) error {
	return e.invoke(ctx, "SetArchived", nil, chatID, archived)
}

// React implements engine.ChatActor.
func (e *Engine) React(ctx context.Context, key engine.Key, emoji string) error {
	return e.invoke(ctx, "React", nil, key, emoji)
}

// Pin implements engine.ChatActor.
func (e *Engine) Pin(ctx context.Context, key engine.Key, d time.Duration) error {
	return e.invoke(ctx, "Pin", nil, key, d)
}

// FetchMedia implements engine.MediaFetcher. An engine that announced
// FeatureMediaRefs uploads the bytes to an upload slot (mediaResult): the
// Media's Body streams them, and the caller closes it.
func (e *Engine) FetchMedia(ctx context.Context, key engine.Key) (engine.Media, error) {
	return e.mediaResult(ctx, "FetchMedia", false, key)
}

// ShowTyping implements engine.Typist (capability typing; d travels as
// whole milliseconds). The engine answers once the typing is over.
func (e *Engine) ShowTyping(ctx context.Context, chat string, d time.Duration) error {
	return e.invoke(ctx, "ShowTyping", nil, chat, d)
}

// SetChatPresence implements engine.ChatPresencer (capability presence).
func (e *Engine) SetChatPresence(ctx context.Context, chat string, state engine.ChatPresence) error {
	return e.invoke(ctx, "SetChatPresence", nil, chat, state)
}

// Edit implements engine.Editor (capability edit).
func (e *Engine) Edit(ctx context.Context, key engine.Key, text, mediaKind string) error {
	return e.invoke(ctx, "Edit", nil, key, text, mediaKind)
}

// Revoke implements engine.Revoker (capability revoke).
func (e *Engine) Revoke(ctx context.Context, key engine.Key) error {
	return e.invoke(ctx, "Revoke", nil, key)
}

// CreateNewsletter implements engine.NewsletterCreator. The description is
// sent only when there is one, so that an engine built before it took one still
// creates newsletters without.
func (e *Engine) CreateNewsletter(ctx context.Context, name, description string) (c engine.ChatState, err error) {
	if description == "" {
		return c, e.invoke(ctx, "CreateNewsletter", []any{&c}, name)
	}
	return c, e.invoke(ctx, "CreateNewsletter", []any{&c}, name, description)
}

// CreateGroup implements engine.GroupAdmin.
func (e *Engine) CreateGroup(ctx context.Context, name string, participants []string) (id string, added []engine.Added, err error) {
	return id, added, e.invoke(ctx, "CreateGroup", []any{&id, &added}, name, participants)
}

// UpdateGroup implements engine.GroupAdmin.
func (e *Engine) UpdateGroup(ctx context.Context, groupID string, u engine.GroupUpdate) error {
	return e.invoke(ctx, "UpdateGroup", nil, groupID, u)
}

// AddParticipants implements engine.GroupAdmin.
func (e *Engine) AddParticipants(ctx context.Context, groupID string, participants []string) (added []engine.Added, err error) {
	return added, e.invoke(ctx, "AddParticipants", []any{&added}, groupID, participants)
}

// RemoveParticipant implements engine.GroupAdmin.
func (e *Engine) RemoveParticipant(ctx context.Context, groupID, participant string) error {
	return e.invoke(ctx, "RemoveParticipant", nil, groupID, participant)
}

// SetAdmin implements engine.GroupAdmin.
func (e *Engine) SetAdmin(ctx context.Context, groupID, participant string, admin bool) error {
	return e.invoke(ctx, "SetAdmin", nil, groupID, participant, admin)
}

// LeaveGroup implements engine.GroupAdmin.
func (e *Engine) LeaveGroup(ctx context.Context, groupID string) error {
	return e.invoke(ctx, "LeaveGroup", nil, groupID)
}

// SetGroupPicture implements engine.GroupAdmin. An engine that announced
// FeatureMediaRefs gets the picture as a URL of the media store to fetch
// (pictureRef), removed once it answered.
func (e *Engine) SetGroupPicture(ctx context.Context, groupID string, picture engine.Media) error {
	if !slices.Contains(e.caps, methodCapability["SetGroupPicture"]) {
		return e.invoke(ctx, "SetGroupPicture", nil, groupID, picture) // answers engine_unavailable
	}
	ref, done, err := e.pictureRef(ctx, picture)
	if err != nil {
		return err
	}
	defer done()
	return e.invoke(ctx, "SetGroupPicture", nil, groupID, ref)
}

// PairingQR implements engine.Pairer.
// A QR the engine reported in a state frame while pairing is answered without
// asking it.
func (e *Engine) PairingQR(ctx context.Context) (qr string, err error) {
	if e.qr != "" {
		return e.qr, nil
	}
	return qr, e.invoke(ctx, "PairingQR", []any{&qr})
}

// PairingCode implements engine.Pairer.
func (e *Engine) PairingCode(ctx context.Context, phone string) (code string, err error) {
	return code, e.invoke(ctx, "PairingCode", []any{&code}, phone)
}

// Logout implements engine.LoggerOut.
func (e *Engine) Logout(ctx context.Context) error {
	return e.invoke(ctx, "Logout", nil)
}

// Restart implements engine.Restarter.
func (e *Engine) Restart(ctx context.Context) error {
	return e.invoke(ctx, "Restart", nil)
}

// ContactDetails implements engine.ContactDetailer.
func (e *Engine) ContactDetails(ctx context.Context, jid string) (d engine.ContactDetails, err error) {
	return d, e.invoke(ctx, "ContactDetails", []any{&d}, jid)
}
