package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// The checks of the commands: every command of the announced capabilities, and Send's idempotency.

// errorCode is the form of an error code: a known wire code or a Switchboard
// error code, lower-case words joined by underscores.
var errorCode = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// checkCommands sends every command of the announced capabilities and checks
// each reply's shape; a skipped capability is one check.
func (k *kit) checkCommands(ctx context.Context) {
	var l learned
	var skipped []string
	for _, method := range k.methods() {
		capability := remote.MethodCapability(method)
		if !k.announced(capability) {
			skipped = append(skipped, method)
			continue
		}
		k.add(k.checkCommand(ctx, method, &l))
		if method == "Send" && l.key.ID != "" {
			k.add(k.checkIdempotentSend(ctx, l.key))
		}
	}
	if len(skipped) > 0 {
		k.add(Check{Name: "commands not announced", Status: Skip, Detail: strings.Join(skipped, ", ")})
	}
}

// methods are the commands the kit sends in order: commandOrder, then any
// the kit has no place for (a newer server's), but Logout and Restart.
func (k *kit) methods() []string {
	out := slices.Clone(commandOrder)
	for _, m := range remote.Methods() {
		if !slices.Contains(out, m) && m != "Logout" && m != "Restart" {
			out = append(out, m)
		}
	}
	return out
}

// checkCommand sends one command and checks its reply: a result that
// validates against result.<method>, or an error with a code. Send must
// succeed, with the wire id as the key's id.
func (k *kit) checkCommand(ctx context.Context, method string, l *learned) Check {
	name := "command " + method
	params := k.params(method, l)
	if params == nil {
		return Check{Name: name, Status: Skip, Detail: "the kit has no params for it"}
	}
	e, err := k.command(ctx, method, params)
	if err != nil {
		return fail(name, "%v", err)
	}
	if err := k.v.Frame(e.raw); err != nil {
		return fail(name, "the reply does not validate: %s", oneLine(err))
	}
	if e.head.Error != nil {
		switch code := e.head.Error.Code; {
		case code == "unsupported":
			return fail(name, "answered unsupported, but the hello announced %s", remote.MethodCapability(method))
		case !errorCode.MatchString(code):
			return fail(name, "answered an error whose code %q is not a code", code)
		case method == "Send":
			return fail(name, "a text to %s was answered %s: %s (is --to on the engine's network?)", k.o.To, code, e.head.Error.Message)
		}
		return pass(name, "answered error %s", e.head.Error.Code)
	}
	if e.head.Result == nil {
		return fail(name, "the reply has neither result nor error")
	}
	if err := k.v.Def("result."+method, e.head.Result); err != nil {
		return fail(name, "the result does not validate: %s", oneLine(err))
	}
	if msg := l.learn(method, e.head.Result); msg != "" {
		return fail(name, "%s", msg)
	}
	return pass(name, "result %s", clip(string(e.head.Result), 80))
}

// learn keeps what a result gives later commands, and says what is wrong with
// a Send's.
func (l *learned) learn(method string, result json.RawMessage) string {
	switch method {
	case "Send":
		var r []engine.Key
		if json.Unmarshal(result, &r) != nil || len(r) == 0 || r[0].ID == "" {
			return "Send answered no key"
		}
		if r[0].ID != sendWireID {
			return fmt.Sprintf("Send answered key id %q, not the command's wireId %q", r[0].ID, sendWireID)
		}
		l.key = r[0]
	case "CreateGroup":
		var r []json.RawMessage
		if json.Unmarshal(result, &r) == nil && len(r) > 0 {
			_ = json.Unmarshal(r[0], &l.group)
		}
	case "CreateNewsletter":
		var r []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(result, &r) == nil && len(r) > 0 {
			l.newsletter = r[0].ID
		}
	case "PostStatus":
		var r []engine.Key
		if json.Unmarshal(result, &r) == nil && len(r) > 0 {
			l.status = r[0].ID
		}
	}
	return ""
}

// checkIdempotentSend: a Send of a wire id already sent answers the same key.
func (k *kit) checkIdempotentSend(ctx context.Context, first engine.Key) Check {
	const name = "idempotent Send"
	e, err := k.command(ctx, "Send", k.params("Send", &learned{}))
	if err != nil {
		return fail(name, "%v", err)
	}
	var r []engine.Key
	if e.head.Error != nil || json.Unmarshal(e.head.Result, &r) != nil || len(r) == 0 {
		return fail(name, "the same wireId again was not answered with a key: %s", clip(string(e.raw), 120))
	}
	if r[0] != first {
		return fail(name, "the same wireId again answered %+v, first %+v", r[0], first)
	}
	return pass(name, "the same wireId answered the same key")
}
