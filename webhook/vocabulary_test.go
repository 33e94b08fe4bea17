package webhook

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogMatchesSpec: the catalog holds the spec's 27 event types, in its
// order, each once, then Switchboard's own (chat.merged, session.restricted, session.unrestricted, call.received, contact.blocked, contact.unblocked, contact.updated, group.join_request,
// newsletter.joined, newsletter.left, newsletter.mute_changed, status.received) (the stored and
// delivered names; the literals here are the spec's, on purpose).
func TestCatalogMatchesSpec(t *testing.T) {
	spec := []string{
		"message.queued", "message.sending", "message.delivered", "message.read", "message.failed",
		"new_message_received_webhook", "reply_to_my_message_webhook", "message_edited_webhook",
		"message_deleted_revoked_webhook", "message_reaction_webhook", "poll_vote_webhook", "ack_changed_webhook",
		"participant_joined_via_link_webhook", "participant_added_by_admin_webhook", "participant_left_group_webhook",
		"participant_kicked_from_group_webhook", "group_admin_changed_webhook", "group_name_changed_webhook",
		"group_description_changed_webhook", "group_message_pinned_webhook",
		"session.connected", "session.disconnected",
		"campaign.started", "campaign.paused", "campaign.resumed", "campaign.completed", "campaign.aborted",
		"chat.merged", "session.restricted", "session.unrestricted",
		"call.received",
		"contact.blocked", "contact.unblocked", "contact.updated",
		"group.join_request",
		"newsletter.joined", "newsletter.left", "newsletter.mute_changed",
		"status.received",
	}
	if diff := cmp.Diff(spec, Catalog); diff != "" {
		t.Errorf("catalog (-spec +got):\n%s", diff)
	}
	if !InCatalog(EventMessageRead) || InCatalog("message.exploded") || InCatalog("message.sent") {
		t.Error("InCatalog disagrees with the catalog")
	}
}

// pendingLiterals are files that still emit events by literal names, each with
// why. Empty it as they go.
var pendingLiterals = map[string]string{}

// TestEventNamesAreConstants: no hand-written, non-test Go file outside this
// package spells an event type as a string literal; it names the constant beside
// the catalog, so that a typo does not compile instead of silently losing events.
// (Tests through HTTP and the benchmarks speak the wire names and are not read.)
func TestEventNamesAreConstants(t *testing.T) {
	root := ".."
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case "ent", "bench", "webhook", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasSuffix(rel, ".generated.go") {
			return nil
		}
		if _, ok := pendingLiterals[rel]; ok {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && (InCatalog(s) || s == "message.sent") {
					found = append(found, rel+": "+lit.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	if diff := cmp.Diff([]string(nil), found); diff != "" {
		t.Errorf("event names spelled as literals (-want +got):\n%s", diff)
	}
}
