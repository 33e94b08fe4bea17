package rest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/engine/gateway"
)

// Each error code the network answers a gateway's send with ends as
// docs/gateway.md ("Send errors") says, through the API: a permanent code
// fails the message at once with the table's reason, a transient one (or a
// code the table does not list) leaves it pending, to be retried.
func TestServerSendErrorsThroughTheAPI(t *testing.T) {
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	key := e.NewKey("senderrors", "*")
	_, f := pairedGateway(t, e, &fakes, key)
	codes := []int{400, 401, 403, 404, 405, 406, 408, 410, 419, 420, 421, 429, 463, 479, 499, 500, 503, 530}
	f.mu.Lock()
	f.serverError = map[string]int{}
	for _, code := range codes {
		f.serverError[fmt.Sprintf("15550770%d@c.us", code)] = code
	}
	f.mu.Unlock()
	for _, code := range codes {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			r := e.Do("POST", fmt.Sprintf("/v1/messages/+15550770%d", code), key, map[string]any{"type": "text", "text": "x", "withTyping": false})
			row, listed := gateway.ServerErrorOf(code)
			status, reason := r.Data()["status"], fmt.Sprint(r.Data()["failureReason"])
			switch {
			case r.Status != 201:
				t.Errorf("send = %d %s", r.Status, r.Raw)
			case listed && row.Permanent:
				if status != "failed" || !strings.Contains(reason, row.Reason) {
					t.Errorf("permanent %d: status %v, reason %q", code, status, reason)
				}
			case status != "pending":
				t.Errorf("transient %d: status %v (%s)", code, status, r.Raw)
			}
		})
	}
}
