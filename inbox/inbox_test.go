package inbox

import (
	"testing"

	"github.com/switchboardhq/switchboard/engine"
)

// The events of one chat go to one part of a batch, whatever their subject.
func TestSubjectPartFollowsTheChat(t *testing.T) {
	tests := []struct{ name, a, b string }{
		{"an ack and a reply in one chat", "message:true_15551234567@c.us_3EB0AA", "message:false_15551234567@c.us_3EB1BB"},
		{"a group's change and a message in it", "group:120363000000000001@g.us", "message:false_120363000000000001@g.us_ABC_15550001111@c.us"},
		{"a chat's state and an ack in it", "chat:15551234567@c.us", "message:true_15551234567@c.us_3EB0CC"},
	}
	for _, tt := range tests {
		if pa, pb := subjectPart(tt.a, inboxParts), subjectPart(tt.b, inboxParts); pa != pb {
			t.Errorf("%s: parts %d and %d, want one", tt.name, pa, pb)
		}
		// Order keys: the same chat of one workspace, whichever engine reported it.
		a, b := engine.OrderKey("ws_a", "eng_1", tt.a), engine.OrderKey("ws_a", "eng_2", tt.b)
		if pa, pb := subjectPart(a, inboxParts), subjectPart(b, inboxParts); pa != pb {
			t.Errorf("%s as order keys: parts %d and %d, want one", tt.name, pa, pb)
		}
	}
	workspaces := map[int]bool{}
	for i := range 64 {
		workspaces[subjectPart(engine.OrderKey("ws_"+string(rune('a'+i%26))+string(rune('a'+i/26)), "eng", "chat:15551234567@c.us"), inboxParts)] = true
	}
	if len(workspaces) != inboxParts {
		t.Errorf("one chat of 64 workspaces fell in %d parts, want all %d", len(workspaces), inboxParts)
	}
	seen := map[int]bool{}
	for i := range 64 {
		seen[subjectPart("chat:1555000"+string(rune('a'+i%26))+string(rune('a'+i/26))+"@c.us", inboxParts)] = true
	}
	if len(seen) != inboxParts {
		t.Errorf("64 chats fell in %d parts, want all %d", len(seen), inboxParts)
	}
}
