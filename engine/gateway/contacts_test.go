package gateway

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// TestCheckNumbers: numbers reach whatsmeow's IsOnWhatsApp as "+digits", 50 a
// query, the queries CheckGap apart; each answer says on the network or not,
// the chat id, the LID (the answer's JID in LID addressing) and the business.
func TestCheckNumbers(t *testing.T) {
	gap := 40 * time.Millisecond
	h := newHarness(t, true, func(c *Config) { c.CheckGap = gap })
	pn, lid := types.NewJID("15551230001", types.DefaultUserServer), types.NewJID("88881230001", types.HiddenUserServer)
	h.f.alt[pn], h.f.alt[lid] = lid, pn
	h.f.notOnWA["+15551230000"] = true
	h.f.business = map[string]string{"+15551235555": "Acme"}
	phones := []string{"15551230001", "15551230000", "15551235555"}
	for i := range 117 {
		phones = append(phones, fmt.Sprintf("1555999%04d", i))
	}
	got, err := h.e.CheckNumbers(context.Background(), phones)
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.NumberStatus{
		{Phone: "15551230001", OnNetwork: true, ChatID: "15551230001@c.us", LID: "88881230001@lid"},
		{Phone: "15551230000"},
		{Phone: "15551235555", OnNetwork: true, ChatID: "15551235555@c.us", IsBusiness: true, BusinessName: "Acme"},
	}
	if diff := cmp.Diff(want, got[:3]); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if len(got) != 120 || got[119].ChatID != "15559990116@c.us" {
		t.Errorf("%d answers, last %+v", len(got), got[len(got)-1])
	}
	sizes := []int{}
	for _, a := range h.f.onWAAsks {
		sizes = append(sizes, len(a))
	}
	if diff := cmp.Diff([]int{50, 50, 20}, sizes); diff != "" || h.f.onWAAsks[0][0] != "+15551230001" {
		t.Errorf("queries (-want +got sizes):\n%s\nfirst %v", diff, h.f.onWAAsks[0][:1])
	}
	for i := 1; i < len(h.f.onWAAt); i++ {
		if d := h.f.onWAAt[i].Sub(h.f.onWAAt[i-1]); d < gap {
			t.Errorf("query %d went %s after the one before, less than the gap %s", i, d, gap)
		}
	}
}

// TestBlocklist: block and unblock reach whatsmeow's UpdateBlocklist with the
// contact's JID and the action; the list (LIDs on the network) answers phone
// numbers; the network's block-list changes become EventBlock events.
func TestBlocklist(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	pn, lid := types.NewJID("15551230001", types.DefaultUserServer), types.NewJID("88881230001", types.HiddenUserServer)
	h.f.alt[pn], h.f.alt[lid] = lid, pn
	if err := h.e.Block(ctx, "15551230001@c.us"); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Block(ctx, "77770000001@lid"); err != nil {
		t.Fatal(err)
	}
	list, err := h.e.Blocklist(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"15551230001@c.us", "77770000001@lid"}, list); diff != "" {
		t.Errorf("block list (-want +got):\n%s", diff)
	}
	if err := h.e.Unblock(ctx, "15551230001@c.us"); err != nil {
		t.Fatal(err)
	}
	calls := []string{"block 15551230001@s.whatsapp.net", "block 77770000001@lid", "unblock 15551230001@s.whatsapp.net"}
	if diff := cmp.Diff(calls, h.f.blockCalls); diff != "" {
		t.Errorf("UpdateBlocklist calls (-want +got):\n%s", diff)
	}
	if list, _ := h.e.Blocklist(ctx); !cmp.Equal(list, []string{"77770000001@lid"}) {
		t.Errorf("after unblock: %v", list)
	}
	if err := h.e.Block(ctx, "15550000009@c.us"); err == nil {
		t.Error("blocking a number with no LID succeeded; whatsmeow fails it")
	}

	h.f.deliver(&events.Blocklist{DHash: "d1", Changes: []events.BlocklistChange{
		{JID: lid, Action: events.BlocklistChangeActionBlock},
		{JID: types.NewJID("77770000002", types.HiddenUserServer), Action: events.BlocklistChangeActionUnblock},
	}})
	h.f.deliver(&events.Blocklist{Action: events.BlocklistActionModify, DHash: "d2"})
	evs := h.sink.take()
	var got []engine.BlockChange
	for _, ev := range evs {
		if ev.Type != engine.EventBlock {
			continue // the LID mapping learned, reported too
		}
		if ev.ID == "" {
			t.Errorf("block event without id %+v", ev)
		}
		got = append(got, *ev.Block)
	}
	want := []engine.BlockChange{{ChatID: "15551230001@c.us", Blocked: true}, {ChatID: "77770000002@lid"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func (f *fakeClient) GetBlocklist(context.Context) (*types.Blocklist, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &types.Blocklist{DHash: fmt.Sprint(len(f.blockCalls)), JIDs: slices.Clone(f.blocked)}, nil
}

// UpdateBlocklist keeps the list by LID, as whatsmeow sends it: a phone number
// is resolved to its LID through the store (an unknown one fails, as
// whatsmeow's does when the server knows no LID either).
func (f *fakeClient) UpdateBlocklist(_ context.Context, jid types.JID, action events.BlocklistChangeAction) (*types.Blocklist, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blockCalls = append(f.blockCalls, string(action)+" "+jid.String())
	lid := jid
	if jid.Server == types.DefaultUserServer {
		var ok bool
		if lid, ok = f.alt[jid]; !ok {
			return nil, fmt.Errorf("no LID found for %s from server", jid)
		}
	}
	f.blocked = slices.DeleteFunc(f.blocked, func(j types.JID) bool { return j == lid })
	if action == events.BlocklistChangeActionBlock {
		f.blocked = append(f.blocked, lid)
	}
	return &types.Blocklist{DHash: fmt.Sprint(len(f.blockCalls)), JIDs: slices.Clone(f.blocked)}, nil
}
