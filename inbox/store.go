package inbox

import (
	"github.com/switchboardhq/switchboard/ent"
)

// Store reads the conversation store (chats, messages, contacts, group members)
// that the inbox writes. A reader gives it the client of its own pool (the
// API's), so that reads never wait for the workers' connections; the viewer of
// each call's context scopes what it reads to a workspace.
type Store struct {
	Client *ent.Client
}

// Cursors are the page arguments of a Relay connection.
type Cursors struct {
	After, Before *ent.Cursor
	First, Last   *int
}
