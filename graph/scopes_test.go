package graph

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/viewer"
)

// A root field needs the scope its @scope declares, checked on the operation
// before any of it runs: a key without it is refused whole, naming the scope and
// the field; without a valid viewer the operation is unauthorized.
func TestRootFieldsNeedTheirDeclaredScope(t *testing.T) {
	s := schemaForTest().Schema()
	key := func(scopes ...string) context.Context {
		return viewer.NewContext(context.Background(), viewer.Viewer{WorkspaceID: "ws", Scopes: scopes})
	}
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		query string
		code  string // "" when the operation may run
		want  string // in the message
	}{
		{"any key pings", key(), `{ ping { api } }`, "", ""},
		{"a query's scope", key("messages:read"), `{ ping { api } chatList { total } }`, switchboard.EFORBIDDEN, "chats:read to use Query.chatList"},
		{"a mutation's scope", key("campaigns:read"), `mutation { cancelCampaign(id: "x") { id } }`, switchboard.EFORBIDDEN, "campaigns:write to use Mutation.cancelCampaign"},
		{"through a fragment", key(), `query { ...F } fragment F on Query { account { id } }`, switchboard.EFORBIDDEN, "account:read"},
		{"with the scope", key("chats:read"), `{ chatList { total } }`, "", ""},
		{"no viewer", context.Background(), `{ ping { api } }`, switchboard.EUNAUTHORIZED, ""},
		{"a viewer of no workspace", viewer.NewContext(context.Background(), viewer.Viewer{Scopes: []string{"*"}}), `{ ping { api } }`, switchboard.EUNAUTHORIZED, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := gqlparser.LoadQuery(s, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			gerr := checkScopes(tc.ctx, s, doc.Operations[0])
			if tc.code == "" {
				if gerr != nil {
					t.Fatalf("refused: %v", gerr)
				}
				return
			}
			var e *switchboard.Error
			if gerr == nil || !errors.As(gerr.Err, &e) || e.Code != tc.code || !strings.Contains(gerr.Message, tc.want) {
				t.Fatalf("got %v, want %s naming %q", gerr, tc.code, tc.want)
			}
		})
	}
}
