package rest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph"
	"github.com/switchboardhq/switchboard/viewer"
)

// refusedAsTooBig reports why res is not an operation refused before it ran for
// its size: one invalid_request error saying what is too big ("complexity" or
// "nests", either when what is empty), no data.
func refusedAsTooBig(res gqlResult, what string) string {
	if len(res.Errors) != 1 {
		return fmt.Sprintf("%d errors, want 1: %+v", len(res.Errors), res.Errors)
	}
	msg := res.Errors[0].Message
	said := strings.Contains(msg, what) && (strings.Contains(msg, "complexity") || strings.Contains(msg, "nests"))
	switch {
	case res.Errors[0].Extensions["code"] != switchboard.EINVALID || !said:
		return fmt.Sprintf("error %+v, want invalid_request about %s", res.Errors[0], what)
	case res.Data != nil:
		return "the operation ran"
	}
	return ""
}

// Issue 26 row 3: pages nested through edges that lead back up multiplied
// (audience → contacts(first: 100) → audience → contacts(first: 100) → …: 1M
// nodes over 1,000 contacts). Every page costs its size, and the nesting is
// bounded: such operations are refused before they run, with what is too big.
func TestGraphQLNestedPagesAreRefused(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "nest", "contacts": phones(800, 120)})
	c := createCampaign(e, e.Key, map[string]any{"name": "nest", "audienceId": aud["id"], "text": "hi",
		"pacing": map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0}})
	vars := map[string]any{"a": aud["id"], "c": c["cmpId"]}
	reader := e.NewKey("default", "audiences:read", "campaigns:read", "messages:read", "chats:read")

	// The query, with first: 100 and (on PostgreSQL there) first: 60: too
	// deep, and too costly at two levels already.
	for _, n := range []int{100, 60} {
		q := fmt.Sprintf(`query($a: ID!) { audience(id: $a) { contacts(first: %[1]d) { edges { node { to audience {
			contacts(first: %[1]d) { edges { node { to audience { contacts(first: %[1]d) { edges { node { to } } } } } } } } } } } } }`, n)
		if why := refusedAsTooBig(gql(e, reader, q, vars), ""); why != "" {
			t.Errorf("contacts(first: %d) three deep: %s", n, why)
		}
		q = fmt.Sprintf(`query($a: ID!) { audience(id: $a) { contacts(first: %[1]d) { edges { node { to audience {
			contacts(first: %[1]d) { edges { node { to } } } } } } } } }`, n)
		if why := refusedAsTooBig(gql(e, reader, q, vars), "complexity"); why != "" {
			t.Errorf("contacts(first: %d) two deep: %s", n, why)
		}
	}
	// A campaign's messages back through their campaign.
	q := `query($c: ID!) { campaign(id: $c) { messages(first: 100) { edges { node { campaign { messages(first: 100) { edges { node { id text } } } } } } } } }`
	if why := refusedAsTooBig(gql(e, reader, q, vars), "complexity"); why != "" {
		t.Errorf("campaign messages two deep: %s", why)
	}
	// Pages of cheap items still nest past the depth limit.
	deep := `query($a: ID!) { audience(id: $a) { contacts(first: 1) { edges { node { audience { contacts(first: 1) { edges { node {
		audience { contacts(first: 1) { edges { node { audience { id } } } } } } } } } } } } } }`
	if why := refusedAsTooBig(gql(e, reader, deep, vars), "nests"); why != "" {
		t.Errorf("14 levels: %s", why)
	}
	// Unpaged lists are costed too: the audiences, each with a page of contacts.
	q = `{ audienceList(limit: 200) { items { contacts(first: 200) { edges { node { to } } } } } }`
	if why := refusedAsTooBig(gql(e, reader, q, nil), "complexity"); why != "" {
		t.Errorf("200 audiences x 200 contacts: %s", why)
	}
	// What a client needs still runs: one page of contacts with their audience,
	// within the depth limit.
	ok := `query($a: ID!) { audience(id: $a) { name contactCount contacts(first: 100) { totalCount edges { node { to variables { key value } audience { id } } } } } }`
	res := gql(e, reader, ok, vars)
	if len(res.Errors) > 0 || dig(res.Data, "audience", "contacts", "totalCount") != 120.0 {
		t.Errorf("one page of contacts: %+v %v", res.Errors, dig(res.Data, "audience", "contacts", "totalCount"))
	}
	ok = `query($a: ID!) { audience(id: $a) { contacts(first: 1) { edges { node { audience { contacts(first: 1) { edges { node {
		audience { contacts(first: 1) { edges { cursor } } } } } } } } } } } }`
	if n := strings.Count(ok, "{"); n != graph.MaxDepth { // one per level but the leaf's, and the operation's
		t.Fatalf("the query nests %d deep, want %d", n, graph.MaxDepth)
	}
	if res := gql(e, reader, ok, vars); len(res.Errors) > 0 {
		t.Errorf("%d levels: %+v", graph.MaxDepth, res.Errors)
	}
}

// Fragments spread twice in fragments spread twice: 2^40 fields from a 2 KB
// document. Walking it (for its cost, its depth or its scopes) would never end;
// it is refused as too complex from its size, counted with each fragment once.
func TestGraphQLFragmentBombIsRefused(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	b.WriteString("fragment F40 on Query { ping { api } }\n")
	if why := refusedAsTooBig(gql(e, e.Key, b.String(), nil), "complexity"); why != "" {
		t.Error(why)
	}
}

// Group.participants has no page of its own (a group holds up to 1,024 on
// WhatsApp): a page of groups answers at most 5,000 participants in all, and
// past that says what to ask for instead; the groups alone still list.
func TestGraphQLParticipantsOfAPageOfGroups(t *testing.T) {
	e := newEnv(t)
	ctx := systemCtx()
	ws, err := auth.EnsureWorkspace(ctx, e.App.Client, "default")
	if err != nil {
		t.Fatal(err)
	}
	wctx := viewer.WorkspaceContext(ctx, ws.ID)
	groups := gqlData(t, e, `{ groupList(limit: 200, includeArchive: true) { items { id participants { chatId } } } }`, nil)
	items := dig(groups, "groupList", "items").([]any)
	if len(items) < 2 {
		t.Fatalf("groups: %v", groups)
	}
	// The first group grows to about 5,000 members: with the others' over the bound.
	jid := items[0].(map[string]any)["id"].(string)
	own := len(dig(items[0], "participants").([]any))
	for start := 0; start < 5000-own; start += 1000 {
		creates := make([]*ent.ChatMemberCreate, 0, 1000)
		for i := start; i < min(start+1000, 5000-own); i++ {
			creates = append(creates, e.App.Client.ChatMember.Create().SetChatJid(jid).SetMemberJid(fmt.Sprintf("1777%07d@c.us", i)))
		}
		if err := e.App.Client.ChatMember.CreateBulk(creates...).Exec(wctx); err != nil {
			t.Fatal(err)
		}
	}
	res := gql(e, e.Key, `{ groupList(limit: 200, includeArchive: true) { total items { id participants { chatId name } } } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != switchboard.EINVALID || !strings.Contains(res.Errors[0].Message, "fewer groups") {
		t.Errorf("a page of groups with 5,000+ participants: %+v", res.Errors)
	}
	// Fewer groups, or the groups without their participants, or one group.
	for _, q := range []string{
		`{ groupList(limit: 1, includeArchive: true) { items { participants { chatId } } } }`,
		`{ groupList(limit: 200, includeArchive: true) { total items { id name participantCount } } }`,
	} {
		if res := gql(e, e.Key, q, nil); len(res.Errors) > 0 {
			t.Errorf("%s: %+v", q, res.Errors)
		}
	}
	one := gql(e, e.Key, `query($id: String!) { group(id: $id) { participants { chatId } } }`, map[string]any{"id": jid})
	if n := len(dig(one.Data, "group", "participants").([]any)); len(one.Errors) > 0 || n != 5000 {
		t.Errorf("one group: %d participants, %+v", n, one.Errors)
	}
}
