package boards

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Follow-ups!", "follow-ups"},
		{"  Sales  Orders ", "sales-orders"},
		{"Rückrufe", "rückrufe"},
		{"!!!", ""},
		{strings.Repeat("x", 45), strings.Repeat("x", 40)},
		{strings.Repeat("a", 39) + " b", strings.Repeat("a", 39)}, // cut at 40, no trailing dash
	}
	for _, tt := range tests {
		if got := Slug(tt.in); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	same := [][2]string{
		{"Call Maria — re: invoice #42!", "call maria re invoice 42"},
		{"  Send   the CONTRACT ", "send the contract"},
	}
	for _, p := range same {
		if Fingerprint(p[0], "1@c.us") != Fingerprint(p[1], "1@C.US ") {
			t.Errorf("%q and %q differ", p[0], p[1])
		}
	}
	if Fingerprint("Call Maria", "1@c.us") == Fingerprint("Call Maria", "2@c.us") {
		t.Error("the same text from two chats is one fact")
	}
	if Fingerprint("Call Maria", "") == Fingerprint("Call Mario", "") {
		t.Error("two texts are one fact")
	}
}

func TestRank(t *testing.T) {
	x := NewIndex([]string{"Call Maria about the invoice", "Call Mario about the new office", "Send the contract to Bob", "Buy milk"})
	tests := []struct {
		query string
		want  []int
	}{
		{"call maria re the invoices", []int{0}},
		{"Call Mario about the office", []int{1, 0}},
		{"BUY MILK!", []int{3}},
		{"quarterly tax filing", nil},
	}
	for _, tt := range tests {
		var got []int
		for _, h := range x.Rank(tt.query, MinScore, 5) {
			got = append(got, h.Doc)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Rank(%q) (-want +got):\n%s", tt.query, diff)
		}
	}
	if s := Similarity("Call Maria re invoice", "call maria about the invoices"); s < 0.5 || s > 0.7 {
		t.Errorf("Similarity = %v, want about 0.6 as the package comment says", s)
	}
	if s := Similarity("buy milk", "Buy milk."); s != 1 {
		t.Errorf("Similarity of one normalized text = %v", s)
	}
}

func TestTemplates(t *testing.T) {
	for _, d := range Domains() {
		tpl, ok := Builtin(d)
		if !ok || tpl.Name == "" || tpl.Description == "" {
			t.Fatalf("Builtin(%q) = %+v, %v", d, tpl, ok)
		}
		tpl.Columns[0].Options[0].Label = "changed"
		if again, _ := Builtin(d); again.Columns[0].Options[0].Label == "changed" {
			t.Errorf("Builtin(%q) shares its options with callers", d)
		}
		var ids []string
		for _, c := range tpl.Columns {
			ids = append(ids, c.ID)
		}
		if ids[0] != StatusColumn || ids[1] != PriorityColumn || ids[2] != DateColumn || tpl.Columns[len(ids)-1].Title != SourceTitle {
			t.Errorf("%s columns = %v", d, ids)
		}
	}
	if c := Custom("Orders", "orders"); c.Domain != "custom:orders" || c.Name != "🤖 Orders" {
		t.Errorf("Custom = %+v", c)
	}
}
