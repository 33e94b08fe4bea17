package inbox_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/viewer"
)

// The address book: saved contacts first, then by (saved) name and id; a search by
// name, push name or id; the contacts among some ids.
func TestContacts(t *testing.T) {
	s := openStore(t)
	for _, c := range []struct {
		jid, name, push string
		saved           bool
	}{
		{"15550000004@c.us", "", "dora", false},
		{carol, "Carol", "", true},
		{alice, "Alice", "ally", true},
		{bob, "", "Bobby", false},
		{"15550000005@c.us", "", "", false},
	} {
		if err := s.Client.Contact.Create().SetJid(c.jid).SetName(c.name).SetPushName(c.push).SetSaved(c.saved).Exec(wsr); err != nil {
			t.Fatal(err)
		}
	}
	other := viewer.WorkspaceContext(context.Background(), "ws_other")
	if err := s.Client.Contact.Create().SetJid("15550000066@c.us").SetName("Alice elsewhere").SetSaved(true).Exec(other); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		f           inbox.ContactFilter
		limit, skip int
		want        []string
		total       int
	}{
		{"every contact", inbox.ContactFilter{}, 10, 0, []string{alice, carol, bob, "15550000004@c.us", "15550000005@c.us"}, 5},
		{"a page", inbox.ContactFilter{}, 2, 1, []string{carol, bob}, 5},
		{"by name or push name, folded", inbox.ContactFilter{Search: "AL"}, 10, 0, []string{alice}, 1},
		{"by push name", inbox.ContactFilter{Search: "bob"}, 10, 0, []string{bob}, 1},
		{"by id", inbox.ContactFilter{Search: "0000004"}, 10, 0, []string{"15550000004@c.us"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Contacts(wsr, tt.f, tt.limit, tt.skip)
			if err != nil {
				t.Fatal(err)
			}
			total, err := s.CountContacts(wsr, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, contactJids(got)); diff != "" {
				t.Errorf("contacts (-want +got):\n%s", diff)
			}
			if total != tt.total {
				t.Errorf("total %d, want %d", total, tt.total)
			}
		})
	}
	some, err := s.ContactsOf(wsr, bob, carol, "15550000099@c.us", "15550000066@c.us")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{bob, carol}, sorted(contactJids(some))); diff != "" {
		t.Errorf("ContactsOf (-want +got):\n%s", diff)
	}
}

func contactJids(cs []*ent.Contact) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Jid)
	}
	return out
}

// The members of groups: super admins, then admins, then by id; and their count.
func TestMembers(t *testing.T) {
	s := openStore(t, seedChat{jid: garden, name: "Garden club"}, seedChat{jid: "120363000000000002@g.us", name: "Book club"})
	for _, m := range []struct {
		group, member     string
		admin, superAdmin bool
	}{
		{garden, carol, false, false},
		{garden, alice, true, false},
		{garden, bob, true, true},
		{garden, "15550000004@c.us", false, false},
		{"120363000000000002@g.us", alice, false, false},
	} {
		err := s.Client.ChatMember.Create().SetChatJid(m.group).SetMemberJid(m.member).SetIsAdmin(m.admin).
			SetIsSuperAdmin(m.superAdmin).Exec(wsr)
		if err != nil {
			t.Fatal(err)
		}
	}
	members, err := s.Members(wsr, garden)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range members {
		got = append(got, m.MemberJid)
	}
	if diff := cmp.Diff([]string{bob, alice, carol, "15550000004@c.us"}, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	counts := map[string]int{}
	for name, groups := range map[string][]string{"garden": {garden}, "both": {garden, "120363000000000002@g.us"}, "none": {}} {
		if counts[name], err = s.CountMembers(wsr, groups...); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(map[string]int{"garden": 4, "both": 5, "none": 0}, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}
