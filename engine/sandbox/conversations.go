package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/sandboxworld"
	"github.com/switchboardhq/switchboard/viewer"
)

// The sandbox engine implements every conversation interface.
var (
	_ engine.HistorySyncer     = (*Engine)(nil)
	_ engine.HistoryLoader     = (*Engine)(nil)
	_ engine.ChatActor         = (*Engine)(nil)
	_ engine.MediaFetcher      = (*Engine)(nil)
	_ engine.MediaRefFetcher   = (*Engine)(nil)
	_ engine.NewsletterCreator = (*Engine)(nil)
)

// world returns the workspace's world, anchoring it now the first time it is
// asked for (the anchor is kept in the database, so the world outlives restarts).
func (e *Engine) world(ctx context.Context) (*world, bool, error) {
	e.net.mu.Lock()
	w, synced := e.net.worlds[e.workspaceID], e.net.synced[e.workspaceID]
	e.net.mu.Unlock()
	if w != nil && synced {
		return w, true, nil
	}
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	row, err := e.net.client.SandboxWorld.Get(ctx, e.workspaceID)
	if ent.IsNotFound(err) {
		err = e.net.client.SandboxWorld.Create().SetID(e.workspaceID).SetAnchor(time.Now().UTC().Truncate(time.Minute)).
			OnConflictColumns(sandboxworld.FieldID).DoNothing().Exec(ctx)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, false, err
		}
		row, err = e.net.client.SandboxWorld.Get(ctx, e.workspaceID)
	}
	if err != nil {
		return nil, false, err
	}
	w = newWorld(e.workspaceID, row.Anchor, e.net.Phone)
	e.net.mu.Lock()
	e.net.worlds[e.workspaceID], e.net.synced[e.workspaceID] = w, row.Synced
	e.net.mu.Unlock()
	return w, row.Synced, nil
}

// SyncHistory implements engine.HistorySyncer: the first time, the world's
// address book and the recent history of every chat are reported, one event per
// chat, each with an id of its own so that a report repeated after a crash is
// stored once.
func (e *Engine) SyncHistory(ctx context.Context) (bool, error) {
	w, synced, err := e.world(ctx)
	if err != nil || synced {
		return false, err
	}
	report := func(id string, h *engine.History) error {
		ev := e.event(engine.Event{ID: "sbh_" + e.workspaceID + "_" + id, Type: engine.EventHistory, At: w.anchor, History: h})
		return e.net.sink.HandleEvent(ctx, ev)
	}
	if err := report("contacts", &engine.History{Contacts: w.addressBook()}); err != nil {
		return false, err
	}
	for i, c := range w.chats {
		msgs, cov := w.recent(i)
		if err := report(fmt.Sprint(i), &engine.History{Chats: []engine.ChatState{c.state}, Messages: msgs, Coverage: []engine.Coverage{cov}}); err != nil {
			return false, err
		}
	}
	// From now on the world's groups take their turns (see groups.go).
	if err := e.keepWorldGroups(ctx, w, worldGroups()...); err != nil {
		return false, err
	}
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	if err := e.net.client.SandboxWorld.UpdateOneID(e.workspaceID).SetSynced(true).Exec(ctx); err != nil {
		return false, err
	}
	e.net.mu.Lock()
	e.net.synced[e.workspaceID] = true
	e.net.mu.Unlock()
	return true, nil
}

// LoadOlder implements engine.HistoryLoader: one page of HistoryPageSize messages
// older than before; a chat outside the world has no history on the phone.
func (e *Engine) LoadOlder(ctx context.Context, chatID string, before time.Time) (engine.HistoryPage, error) {
	w, _, err := e.world(ctx)
	if err != nil {
		return engine.HistoryPage{}, err
	}
	i, ok := w.index[chatID]
	if !ok {
		return engine.HistoryPage{Unavailable: true, OldestAt: before}, nil
	}
	msgs, cov := w.older(i, before)
	h := &engine.History{Messages: msgs, Coverage: []engine.Coverage{cov}}
	ev := e.event(engine.Event{ID: fmt.Sprintf("sbo_%s_%d_%d", e.workspaceID, i, before.Unix()), Type: engine.EventHistory, At: time.Now(), History: h})
	if err := e.net.sink.HandleEvent(ctx, ev); err != nil {
		return engine.HistoryPage{}, err
	}
	return engine.HistoryPage{Messages: len(msgs), OldestAt: cov.OldestAt, More: !cov.Complete}, nil
}

// report reports an event the account caused, now.
func (e *Engine) report(ctx context.Context, ev engine.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ev = e.event(ev)
	ev.ID, ev.At = switchboard.NewID("sbe"), time.Now()
	return e.net.sink.HandleEvent(ctx, ev)
}

// MarkRead implements engine.ChatActor.
func (e *Engine) MarkRead(ctx context.Context, chatID string) error {
	zero, no := 0, false
	return e.report(ctx, engine.Event{Type: engine.EventChat, Chat: &engine.ChatState{ID: chatID, UnreadCount: &zero, MarkedUnread: &no}})
}

// SetArchived implements engine.ChatActor.
func (e *Engine) SetArchived(ctx context.Context, chatID string, archived bool) error {
	return e.report(ctx, engine.Event{Type: engine.EventChat, Chat: &engine.ChatState{ID: chatID, Archived: &archived}})
}

// React implements engine.ChatActor.
func (e *Engine) React(ctx context.Context, key engine.Key, emoji string) error {
	return e.report(ctx, engine.Event{Type: engine.EventReaction, Key: key, Reaction: emoji})
}

// Pin implements engine.ChatActor.
func (e *Engine) Pin(ctx context.Context, key engine.Key, d time.Duration) error {
	return e.report(ctx, engine.Event{Type: engine.EventPin, Key: key, Pinned: d})
}

// ShowTyping implements engine.Typist: the network notes that the account typed
// in chat for d (Network.Typing) and takes that long, scaled like its acks (d
// times the ack delay over a second: 1 s of typing takes 50 ms under a 50 ms ack
// delay), so that tests and demos keep the sandbox's pace.
func (e *Engine) ShowTyping(ctx context.Context, chat string, d time.Duration) error {
	e.net.note(e.workspaceID, Typing{Chat: chat, State: engine.PresenceTyping, For: d, At: time.Now()})
	wait := time.Duration(float64(d) * float64(e.net.delay) / float64(time.Second))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

// Typing is one "typing…" (or another chat presence) the account showed
// through the sandbox: for a while (ShowTyping, For), or until it says
// otherwise (SetChatPresence, For 0).
type Typing struct {
	Chat  string
	State engine.ChatPresence
	For   time.Duration
	At    time.Time
}

// note remembers a presence the account showed in a workspace, the latest
// maxTyping.
func (n *Network) note(workspaceID string, t Typing) {
	n.mu.Lock()
	defer n.mu.Unlock()
	log := append(n.typing[workspaceID], t)
	if len(log) > maxTyping {
		log = log[len(log)-maxTyping:]
	}
	n.typing[workspaceID] = log
}

// maxTyping bounds the typing the network remembers per workspace.
const maxTyping = 100

// Typing returns the presences the account showed through the network in a
// workspace (typing, recording, paused), the latest maxTyping, oldest first.
func (n *Network) Typing(workspaceID string) []Typing {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Typing(nil), n.typing[workspaceID]...)
}

// FetchMedia implements engine.MediaFetcher for the media of the world's messages.
func (e *Engine) FetchMedia(ctx context.Context, key engine.Key) (engine.Media, error) {
	w, _, err := e.world(ctx)
	if err != nil {
		return engine.Media{}, err
	}
	m, ok := w.mediaOf(key)
	if !ok {
		return engine.Media{}, engine.ErrNotFound
	}
	return m, nil
}

// FetchMediaRef implements engine.MediaRefFetcher: the media a Kinds contact
// sent (by the reference the engine gave with it), else as FetchMedia.
func (e *Engine) FetchMediaRef(ctx context.Context, key engine.Key, ref []byte) (engine.Media, error) {
	digits, ok := strings.CutPrefix(string(ref), kindRef)
	in, known := Kinds[digits]
	if !ok || !known || in.Media == nil {
		return e.FetchMedia(ctx, key)
	}
	return engine.Media{Data: kindMedia(digits), MimeType: in.Media.MimeType, Filename: in.Media.Filename}, nil
}

// CreateNewsletter implements engine.NewsletterCreator.
func (e *Engine) CreateNewsletter(ctx context.Context, name, description string) (engine.ChatState, error) {
	now := time.Now().UTC().Truncate(time.Second)
	id := fmt.Sprintf("120363%012d@newsletter", worldSeed(e.workspaceID+name+now.String())%1e12)
	s := engine.ChatState{ID: id, Kind: engine.ChatNewsletter, Name: name, Description: description, CreatedAt: &now,
		Invite: "https://chat.example.com/channel/" + switchboard.RandomToken(8), Verification: "UNVERIFIED", Role: engine.NewsletterOwner}
	return s, e.report(ctx, engine.Event{Type: engine.EventChat, Chat: &s})
}
