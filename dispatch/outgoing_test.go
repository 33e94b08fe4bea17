package dispatch_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/ent"
)

// A stored forward goes out marked forwarded, on every attempt; other messages
// do not.
func TestOutgoingOfAForward(t *testing.T) {
	if !dispatch.Outgoing(&ent.Message{ID: "msg_1", Type: "text", Text: "x", ForwardedFrom: "true_1@c.us_A"}).Forwarded {
		t.Error("a forward is not marked forwarded")
	}
	if dispatch.Outgoing(&ent.Message{ID: "msg_2", Type: "text", Text: "x"}).Forwarded {
		t.Error("a message of its own is marked forwarded")
	}
}
