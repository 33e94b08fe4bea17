//go:build faults

package faults

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/webhook"
)

// rescheduleDeferred moves up to n messages that wait for a sendAt a minute
// ahead to 15 s from now, and returns their new times.
func (h *harness) rescheduleDeferred(p *proc, n int) map[string]time.Time {
	rows, err := h.sql.Query(`SELECT id, send_at FROM messages WHERE status = 'pending' AND send_at > $1 ORDER BY send_at LIMIT $2`,
		time.Now().Add(30*time.Second), n)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			h.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	moved := map[string]time.Time{}
	for _, id := range ids {
		for attempt := 0; ; attempt++ {
			at := time.Now().Add(15 * time.Second).UTC().Truncate(time.Second)
			moved[id] = at
			body, _ := json.Marshal(map[string]any{"sendAt": at.Format(time.RFC3339)})
			status, raw := h.call(p, "PATCH", "/v1/scheduled-messages/"+id, body)
			if status == 200 {
				break
			}
			if attempt > 50 || (status != 0 && status != 503) {
				h.t.Fatalf("reschedule %s: %d %s", id, status, raw)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	h.t.Logf("rescheduled %d deferred messages to 15 s from now", len(ids))
	return moved
}

// verify waits until the server has finished all the work it accepted, then
// checks: nothing lost, nothing stuck, nothing sent twice, every event delivered.
func (h *harness) verify(msgs []sent, errors500 int64, rescheduled map[string]time.Time) {
	t := h.t
	want := map[string]string{}
	for _, m := range msgs {
		want[m.id] = map[outcome]string{outRead: "read", outReplied: "read", outReceived: "received", outFailed: "failed"}[m.outcome]
	}
	count := func(q string, args ...any) int {
		var n int
		if err := h.sql.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	status := func() map[string]string {
		rows, err := h.sql.Query(`SELECT id, status FROM messages WHERE secret = 'faults'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var id, s string
			_ = rows.Scan(&id, &s)
			out[id] = s
		}
		return out
	}
	var lastReport string
	settled := func() bool {
		got := status()
		off := 0
		for id, s := range want {
			if got[id] != s {
				off++
			}
		}
		pending := count(`SELECT count(*) FROM deliveries WHERE status <> 'succeeded'`)
		inbox := count(`SELECT count(*) FROM inbox_events WHERE applied_at IS NULL`)
		outbox := count(`SELECT count(*) FROM events WHERE fanned_out_at IS NULL`)
		network := count(`SELECT count(*) FROM sandbox_events`)
		lastReport = fmt.Sprintf("%d messages not in their final status, %d deliveries not succeeded, %d engine events unapplied, "+
			"%d outbox events not fanned out, %d network events to come", off, pending, inbox, outbox, network)
		return off == 0 && pending == 0 && inbox == 0 && outbox == 0 && network == 0
	}
	start := time.Now()
	for !settled() {
		if time.Since(start) > 5*time.Minute {
			got := status()
			var stuck []string
			for id, s := range want {
				if got[id] != s && len(stuck) < 10 {
					stuck = append(stuck, fmt.Sprintf("%s is %q, want %q", id, got[id], s))
				}
			}
			t.Fatalf("not settled after 5 min: %s\n%s", lastReport, strings.Join(stuck, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("settled %s after the last fault: %d messages accepted", time.Since(start).Round(time.Second), len(msgs))

	// Nothing lost, nothing created twice.
	if n := count(`SELECT count(*) FROM messages WHERE secret = 'faults'`); n != len(msgs) {
		t.Errorf("%d messages stored for %d accepted", n, len(msgs))
	}
	// Nothing sent twice, counted at the engine: the network carried each
	// message that was not rejected exactly once.
	carried := count(`SELECT count(*) FROM sandbox_sends`)
	failed := 0
	for _, s := range want {
		if s == "failed" {
			failed++
		}
	}
	resends := count(`SELECT coalesce(sum(resends), 0) FROM sandbox_sends`)
	if carried != len(msgs)-failed {
		t.Errorf("the network carried %d messages, want %d", carried, len(msgs)-failed)
	}
	t.Logf("network: %d carried once each, %d resends of a known wire id absorbed", carried, resends)
	if n := count(`SELECT count(*) FROM inbox_events WHERE dead_at IS NOT NULL`); n != 0 {
		t.Errorf("%d engine events were given up", n)
	}
	if errors500 != 0 {
		t.Errorf("%d answers were 500", errors500)
	}

	// Every event delivered at least once; status events once per message.
	seen := h.receiver.snapshot()
	byMessage := map[string]map[string]int{} // message -> type -> distinct envelopes
	for _, d := range seen {
		if !d.ok {
			continue
		}
		if byMessage[d.messageID] == nil {
			byMessage[d.messageID] = map[string]int{}
		}
		byMessage[d.messageID][d.typ]++
	}
	missing := 0
	for id, final := range want {
		types := []string{webhook.EventMessageQueued, webhook.EventMessageSending}
		switch final {
		case "read":
			types = append(types, webhook.EventMessageDelivered, webhook.EventMessageRead)
		case "received":
			types = append(types, webhook.EventMessageDelivered)
		case "failed":
			types = append(types, webhook.EventMessageFailed)
		}
		for _, typ := range types {
			n := byMessage[id][typ]
			if n == 0 || (typ != webhook.EventMessageSending && n > 1) {
				if missing < 3 {
					t.Errorf("message %s: %d distinct %s events delivered, want 1\n%s", id, n, typ, h.history(id))
				}
				missing++
			}
		}
	}
	rows, err := h.sql.Query(`SELECT id FROM deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	total, unseen := 0, 0
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		total++
		if !seen[id].ok {
			unseen++
		}
	}
	rows.Close()
	if unseen != 0 {
		t.Errorf("%d of %d deliveries were never answered 2xx at the receiver", unseen, total)
	}
	t.Logf("webhooks: %d deliveries, all received; %d messages with a missing or doubled status event", total, missing)

	// Rescheduled after the flush: sent at the new time, not the old one.
	for id, at := range rescheduled {
		var confirmed *time.Time
		if err := h.sql.QueryRow(`SELECT confirmed_at FROM messages WHERE id = $1`, id).Scan(&confirmed); err != nil {
			t.Fatal(err)
		}
		if confirmed == nil || confirmed.Before(at) || confirmed.After(at.Add(5*time.Second)) {
			t.Errorf("rescheduled %s to %s was sent at %v", id, at.Format(time.TimeOnly), confirmed)
		}
	}
}

// history tells what happened to a message: its row, its outbox events and the
// engine events about it, for a failure report.
func (h *harness) history(id string) string {
	var b strings.Builder
	var wa, st string
	var attempts int
	_ = h.sql.QueryRow(`SELECT coalesce(wa_serialized, ''), status, dispatch_attempts FROM messages WHERE id = $1`, id).Scan(&wa, &st, &attempts)
	fmt.Fprintf(&b, "  row: status %s, key %s, %d dispatch attempts\n", st, wa, attempts)
	rows, err := h.sql.Query(`SELECT type, created_at FROM events WHERE data->>'id' = $1 ORDER BY created_at`, id)
	if err == nil {
		for rows.Next() {
			var typ string
			var at time.Time
			_ = rows.Scan(&typ, &at)
			fmt.Fprintf(&b, "  outbox %s at %s\n", typ, at.Format("15:04:05.000"))
		}
		rows.Close()
	}
	rows, err = h.sql.Query(`SELECT type, payload::text, at, created_at, applied_at, attempts, coalesce(last_error, '') FROM inbox_events
		WHERE subject = $1 ORDER BY at`, "message:"+wa)
	if err == nil {
		for rows.Next() {
			var typ, payload, lastErr string
			var at, created time.Time
			var applied *time.Time
			var n int
			_ = rows.Scan(&typ, &payload, &at, &created, &applied, &n, &lastErr)
			fmt.Fprintf(&b, "  engine %s at %s stored %s applied %v after %d attempts %s: %.120s\n", typ,
				at.Format("15:04:05.000"), created.Format("15:04:05.000"), applied, n, lastErr, payload)
		}
		rows.Close()
	}
	return b.String()
}
