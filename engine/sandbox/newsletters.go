package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// Newsletters the sandbox account can follow (docs/newsletters.md): the
// directory's three, the same in every workspace, and the newsletters of the
// workspace's world, which the account follows from the start. Following one
// of the directory's makes it post a welcome message at once (a message of the
// newsletter's chat, delivered as new_message_received_webhook). What the account follows
// and mutes is kept in the process's memory, per workspace and engine.

// DirectoryNewsletter is a newsletter of the sandbox's directory.
type DirectoryNewsletter struct {
	ID, Invite, Name, Description string
	Subscribers                   int
}

// Directory lists the newsletters any sandbox account can follow, by id or by
// invite code.
var Directory = []DirectoryNewsletter{
	{ID: "120363000000000001@newsletter", Invite: "SBNEWS1", Name: "Sandbox Weather", Description: "Tomorrow's weather, every evening", Subscribers: 1200},
	{ID: "120363000000000002@newsletter", Invite: "SBNEWS2", Name: "Sandbox Sports", Description: "Scores and fixtures", Subscribers: 5400},
	{ID: "120363000000000003@newsletter", Invite: "SBNEWS3", Name: "Sandbox Releases", Description: "What shipped this week", Subscribers: 310},
}

// directoryCreated is when the directory's newsletters were made.
var directoryCreated = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

var _ engine.NewsletterFollower = (*Engine)(nil)

// followState is the account's standing with a newsletter in the sandbox.
type followState struct {
	role  string
	muted bool
}

// followKey is the key of a newsletter's state in the network's memory.
func (e *Engine) followKey(id string) string { return e.workspaceID + "|" + e.id + "|" + id }

// known is the newsletter id describes, with the account's standing: one of
// the directory's (a guest until followed) or of the world (followed until
// unfollowed); false for any other.
func (e *Engine) known(ctx context.Context, id string) (engine.ChatState, bool, error) {
	var s engine.ChatState
	found, role := false, engine.NewsletterGuest
	for _, d := range Directory {
		if d.ID == id {
			created := directoryCreated
			s, found = engine.ChatState{ID: d.ID, Kind: engine.ChatNewsletter, Name: d.Name, Description: d.Description,
				CreatedAt: &created, Subscribers: d.Subscribers, Invite: "https://chat.example.com/channel/" + d.Invite,
				Verification: "UNVERIFIED"}, true
		}
	}
	if !found {
		w, _, err := e.world(ctx)
		if err != nil {
			return s, false, err
		}
		i, ok := w.index[id]
		if !ok || w.chats[i].state.Kind != engine.ChatNewsletter {
			return s, false, nil
		}
		s, found, role = w.chats[i].state, true, engine.NewsletterSubscriber
		s.Pinned, s.Archived, s.MarkedUnread, s.UnreadCount = nil, nil, nil, nil
	}
	e.net.mu.Lock()
	if f, ok := e.net.follows[e.followKey(id)]; ok {
		role = f.role
		muted := f.muted
		s.Muted = &muted
	}
	e.net.mu.Unlock()
	if s.Muted == nil {
		no := false
		s.Muted = &no
	}
	s.Role = role
	return s, found, nil
}

// NewsletterInfo implements engine.NewsletterFollower.
func (e *Engine) NewsletterInfo(ctx context.Context, id string) (engine.ChatState, error) {
	s, ok, err := e.known(ctx, id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: newsletter %s", engine.ErrNotFound, id)
	}
	return s, err
}

// NewsletterByInvite implements engine.NewsletterFollower: the directory's
// invite codes (SBNEWS1-3) and those of the world's newsletters' links.
func (e *Engine) NewsletterByInvite(ctx context.Context, code string) (engine.ChatState, error) {
	for _, d := range Directory {
		if strings.EqualFold(d.Invite, code) {
			return e.NewsletterInfo(ctx, d.ID)
		}
	}
	w, _, err := e.world(ctx)
	if err != nil {
		return engine.ChatState{}, err
	}
	for _, c := range w.chats {
		if c.state.Kind == engine.ChatNewsletter && strings.HasSuffix(c.state.Invite, "/"+code) {
			return e.NewsletterInfo(ctx, c.state.ID)
		}
	}
	return engine.ChatState{}, fmt.Errorf("%w: newsletter invite %s", engine.ErrNotFound, code)
}

// setFollow changes the account's standing with a newsletter whose role is
// role before any change.
func (e *Engine) setFollow(id, role string, change func(*followState)) {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	if e.net.follows == nil {
		e.net.follows = map[string]followState{}
	}
	f, ok := e.net.follows[e.followKey(id)]
	if !ok {
		f.role = role
	}
	change(&f)
	e.net.follows[e.followKey(id)] = f
}

// FollowNewsletter implements engine.NewsletterFollower; a directory
// newsletter followed anew posts a welcome message.
func (e *Engine) FollowNewsletter(ctx context.Context, id string) (engine.ChatState, error) {
	s, err := e.NewsletterInfo(ctx, id)
	if err != nil {
		return s, err
	}
	if engine.Following(s.Role) {
		return s, nil
	}
	e.setFollow(id, s.Role, func(f *followState) { f.role = engine.NewsletterSubscriber })
	s.Role = engine.NewsletterSubscriber
	ev := engine.Event{Type: engine.EventNewsletter, Newsletter: &engine.NewsletterChange{NewsletterID: id,
		Action: engine.NewsletterJoined, Role: s.Role, Muted: s.Muted, Chat: &s}}
	if err := e.report(ctx, ev); err != nil {
		return s, err
	}
	for _, d := range Directory {
		if d.ID == id {
			key := engine.Key{Remote: id, ID: "NL" + strings.ToUpper(switchboard.RandomToken(8))}
			in := engine.Incoming{Key: key, From: id, SenderName: d.Name, Type: "text",
				Text: "Welcome to " + d.Name + "! " + d.Description + "."}
			return s, e.report(ctx, engine.Event{Type: engine.EventMessage, Key: key, Message: &in})
		}
	}
	return s, nil
}

// UnfollowNewsletter implements engine.NewsletterFollower.
func (e *Engine) UnfollowNewsletter(ctx context.Context, id string) error {
	s, err := e.NewsletterInfo(ctx, id)
	if err != nil {
		return err
	}
	e.setFollow(id, s.Role, func(f *followState) { f.role = engine.NewsletterGuest })
	return e.report(ctx, engine.Event{Type: engine.EventNewsletter, Newsletter: &engine.NewsletterChange{NewsletterID: id,
		Action: engine.NewsletterLeft, Role: engine.NewsletterGuest}})
}

// MuteNewsletter implements engine.NewsletterFollower.
func (e *Engine) MuteNewsletter(ctx context.Context, id string, muted bool) error {
	s, err := e.NewsletterInfo(ctx, id)
	if err != nil {
		return err
	}
	e.setFollow(id, s.Role, func(f *followState) { f.muted = muted })
	return e.report(ctx, engine.Event{Type: engine.EventNewsletter, Newsletter: &engine.NewsletterChange{NewsletterID: id,
		Action: engine.NewsletterMuteChanged, Role: s.Role, Muted: &muted}})
}
