package host

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// A restriction's changes on the engine row, each with its one event: a new
// or changed restriction is session.restricted (with until when it has one),
// the same one again records nothing, its end is session.unrestricted (and
// reports lifted); a restriction whose time ran out is ended by LiftExpired,
// once however often it runs.
func TestRecordRestriction(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + t.TempDir() + "/host.db"
	client, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := storage.Migrate(ctx, client, url); err != nil {
		t.Fatal(err)
	}
	wctx := viewer.WorkspaceContext(ctx, "ws_r")
	client.Webhook.Create().SetURL("https://example.com/hook").SetSecret("whsec_x").
		SetEvents([]string{"session.restricted", "session.unrestricted"}).SaveX(wctx)
	client.Engine.Create().SetID("eng_g").SetKind("gateway").SaveX(wctx)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	until := now.Add(time.Hour)

	type step struct {
		Why    string
		Until  time.Time
		Lifted bool
		Events []string // "type reason until"
	}
	events := func() []string {
		var out []string
		for _, e := range client.Event.Query().Order(ent.Asc(event.FieldID)).AllX(wctx) {
			var d Restricted
			if err := json.Unmarshal(e.Data, &d); err != nil || d.EngineID != "eng_g" {
				t.Errorf("event data %s: %v", e.Data, err)
			}
			s := e.Type + " " + d.Reason
			if d.Until != nil {
				s += " " + d.Until.Format(time.RFC3339)
			}
			out = append(out, s)
		}
		client.Event.Delete().ExecX(wctx)
		return out
	}
	for _, c := range []step{
		{Why: "banned", Until: until, Events: []string{"session.restricted banned 2026-11-26T13:00:00Z"}},
		{Why: "banned", Until: until},
		{Why: "banned again", Until: until, Events: []string{"session.restricted banned again 2026-11-26T13:00:00Z"}},
		{Why: "", Lifted: true, Events: []string{"session.unrestricted banned again"}},
		{Why: "", Events: nil},
		{Why: "logged out", Events: []string{"session.restricted logged out"}},
		{Why: "", Lifted: true, Events: []string{"session.unrestricted logged out"}},
	} {
		lifted, err := RecordRestriction(ctx, client, "eng_g", c.Why, c.Until, now)
		if err != nil {
			t.Fatal(err)
		}
		got := step{Why: c.Why, Until: c.Until, Lifted: lifted, Events: events()}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("record %q (-want +got):\n%s", c.Why, diff)
		}
	}

	if _, err := RecordRestriction(ctx, client, "eng_g", "time lock", until, now); err != nil {
		t.Fatal(err)
	}
	events()
	if ids, err := LiftExpired(ctx, client, now); err != nil || len(ids) != 0 {
		t.Errorf("LiftExpired before the end = %v, %v", ids, err)
	}
	if ids, err := LiftExpired(ctx, client, until); err != nil || !cmp.Equal(ids, []string{"eng_g"}) {
		t.Errorf("LiftExpired at the end = %v, %v", ids, err)
	}
	if ids, err := LiftExpired(ctx, client, until); err != nil || len(ids) != 0 {
		t.Errorf("LiftExpired again = %v, %v", ids, err)
	}
	if got := events(); !cmp.Equal(got, []string{"session.unrestricted time lock"}) {
		t.Errorf("events of the lapsed lock = %v", got)
	}
	if row := client.Engine.GetX(wctx, "eng_g"); row.Restriction != "" || row.RestrictedUntil != nil {
		t.Errorf("row after LiftExpired = %q %v", row.Restriction, row.RestrictedUntil)
	}
}
