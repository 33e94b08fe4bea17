package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// Call offers become call events (video or voice, group or not, the caller by
// phone number when known), and a rejection names the creator as the offer did.
func TestCallOffers(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	lid := types.NewJID("88887776666", types.HiddenUserServer)
	pn := types.NewJID("15552223333", types.DefaultUserServer)
	video := &waBinary.Node{Tag: "offer", Content: []waBinary.Node{{Tag: "video"}}}
	h.f.emit(&events.CallOffer{BasicCallMeta: types.BasicCallMeta{From: lid, Timestamp: at, CallCreator: lid, CallCreatorAlt: pn, CallID: "C1"}, Data: video})
	h.f.emit(&events.CallOfferNotice{BasicCallMeta: types.BasicCallMeta{From: pn, Timestamp: at, CallCreator: pn, CallID: "C2",
		GroupJID: types.NewJID("120363000000000009", types.GroupServer)}, Media: "audio", Type: "group"})
	var calls []engine.Call
	for _, ev := range h.sink.take() {
		if ev.Type == engine.EventCall {
			if ev.ID != "wa_call_"+ev.Call.ID || !ev.At.Equal(at) {
				t.Errorf("event %s at %s", ev.ID, ev.At)
			}
			calls = append(calls, *ev.Call)
		}
	}
	want := []engine.Call{
		{ID: "C1", From: "15552223333@c.us", Video: true},
		{ID: "C2", From: "15552223333@c.us", Group: true, GroupID: "120363000000000009@g.us"},
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if err := h.e.RejectCall(ctx, "15552223333@c.us", "C1"); err != nil {
		t.Fatal(err)
	}
	if err := h.e.RejectCall(ctx, "15554440000@c.us", "C9"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"88887776666@lid C1", "15554440000@s.whatsapp.net C9"}, h.f.profile.rejected); diff != "" {
		t.Errorf("RejectCall (-want +got):\n%s", diff)
	}
}
