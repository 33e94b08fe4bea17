package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// sender is the part of engine.Engine a command can reach.
type sender interface {
	Send(ctx context.Context, m engine.Outgoing) (engine.Key, error)
}

// capabilities names each engine interface a remote engine can serve; a hello
// lists the names of those its engine implements. The methods of each interface
// are its commands.
var capabilities = []struct {
	name  string
	iface reflect.Type
}{
	{"send", reflect.TypeFor[sender]()},
	{"send_batch", reflect.TypeFor[engine.BatchSender]()},
	{"history_sync", reflect.TypeFor[engine.HistorySyncer]()},
	{"history_load", reflect.TypeFor[engine.HistoryLoader]()},
	{"chat_actions", reflect.TypeFor[engine.ChatActor]()},
	{"media", reflect.TypeFor[engine.MediaFetcher]()},
	{"typing", reflect.TypeFor[engine.Typist]()},
	{"presence", reflect.TypeFor[engine.ChatPresencer]()},
	{"edit", reflect.TypeFor[engine.Editor]()},
	{"revoke", reflect.TypeFor[engine.Revoker]()},
	{"newsletters", reflect.TypeFor[engine.NewsletterCreator]()},
	{"groups", reflect.TypeFor[engine.GroupAdmin]()},
	{"pairing", reflect.TypeFor[engine.Pairer]()},
	{"logout", reflect.TypeFor[engine.LoggerOut]()},
	{"restart", reflect.TypeFor[engine.Restarter]()},
	{"profile", reflect.TypeFor[engine.Profiler]()},
	{"calls", reflect.TypeFor[engine.CallRejecter]()},
	{engine.CapCheckNumbers, reflect.TypeFor[engine.NumberChecker]()},
	{engine.CapBlockList, reflect.TypeFor[engine.Blocker]()},
	{engine.CapContactDetails, reflect.TypeFor[engine.ContactDetailer]()},
	{engine.CapDisappearing, reflect.TypeFor[engine.DisappearingTimer]()},
	{engine.CapGroupInvites, reflect.TypeFor[engine.GroupInviter]()},
	{engine.CapGroupRequests, reflect.TypeFor[engine.GroupRequester]()},
	{engine.CapCommunities, reflect.TypeFor[engine.Communities]()},
	{engine.CapNewsletterFollow, reflect.TypeFor[engine.NewsletterFollower]()},
	{engine.CapStatus, reflect.TypeFor[engine.StatusPoster]()},
}

// methodCapability maps every command (a method name) to its capability.
var methodCapability = func() map[string]string {
	out := map[string]string{}
	for _, c := range capabilities {
		for i := range c.iface.NumMethod() {
			out[c.iface.Method(i).Name] = c.name
		}
	}
	return out
}()

// Capabilities lists the capabilities of an engine: the names of the engine
// interfaces it implements. A typed nil pointer will do.
func Capabilities(e any) []string {
	t := reflect.TypeOf(e)
	var out []string
	for _, c := range capabilities {
		if t != nil && t.Implements(c.iface) {
			out = append(out, c.name)
		}
	}
	return out
}

func knownCapability(name string) bool {
	for _, c := range capabilities {
		if c.name == name {
			return true
		}
	}
	return false
}

// Methods lists every command, sorted.
func Methods() []string {
	out := make([]string, 0, len(methodCapability))
	for m := range methodCapability {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

var (
	contextType  = reflect.TypeFor[context.Context]()
	durationType = reflect.TypeFor[time.Duration]()
)

// dispatch calls method of e with params (a JSON array of the arguments after
// the context) and returns its results but the error as a JSON array. It serves
// every command the same way; only SendBatch, whose results hold errors, has a
// wire form of its own.
func dispatch(ctx context.Context, e engine.Engine, caps []string, method string, params json.RawMessage) (json.RawMessage, error) {
	capability, ok := methodCapability[method]
	if !ok || !slices.Contains(caps, capability) {
		return nil, &WireError{Code: codeUnsupported, Message: fmt.Sprintf("this engine does not serve %s", method)}
	}
	if method == "SendBatch" {
		var args []json.RawMessage
		var ms []engine.Outgoing
		if err := json.Unmarshal(params, &args); err != nil || len(args) != 1 || json.Unmarshal(args[0], &ms) != nil {
			return nil, fmt.Errorf("bad params of SendBatch")
		}
		sent := e.(engine.BatchSender).SendBatch(ctx, ms)
		out := make([]sentWire, len(sent))
		for i, s := range sent {
			out[i] = sentWire{Key: s.Key, Error: EncodeError(s.Err)}
		}
		return json.Marshal([]any{out})
	}
	m := reflect.ValueOf(e).MethodByName(method)
	if !m.IsValid() {
		return nil, &WireError{Code: codeUnsupported, Message: fmt.Sprintf("this engine does not serve %s", method)}
	}
	t := m.Type()
	var raw []json.RawMessage
	if len(params) > 0 {
		if err := json.Unmarshal(params, &raw); err != nil {
			return nil, fmt.Errorf("bad params of %s: %v", method, err)
		}
	}
	// Trailing params may be left out (they are the zero value): a server that
	// predates a method's newest argument still reaches the engine.
	if t.NumIn() == 0 || t.In(0) != contextType || len(raw) > t.NumIn()-1 {
		return nil, fmt.Errorf("%s takes %d params, got %d", method, t.NumIn()-1, len(raw))
	}
	args := []reflect.Value{reflect.ValueOf(ctx)}
	for i := 1; i < t.NumIn(); i++ {
		p := reflect.New(t.In(i))
		if i > len(raw) {
			args = append(args, p.Elem())
			continue
		}
		if t.In(i) == durationType {
			// Durations travel in whole milliseconds.
			var ms int64
			if err := json.Unmarshal(raw[i-1], &ms); err != nil {
				return nil, fmt.Errorf("bad param %d of %s: %v", i, method, err)
			}
			args = append(args, reflect.ValueOf(time.Duration(ms)*time.Millisecond))
			continue
		}
		if err := json.Unmarshal(raw[i-1], p.Interface()); err != nil {
			return nil, fmt.Errorf("bad param %d of %s: %v", i, method, err)
		}
		args = append(args, p.Elem())
	}
	outs := m.Call(args)
	if last := outs[len(outs)-1]; !last.IsNil() {
		return nil, last.Interface().(error)
	}
	results := make([]any, len(outs)-1)
	for i := range results {
		results[i] = outs[i].Interface()
		if d, ok := results[i].(time.Duration); ok {
			results[i] = d.Milliseconds()
		}
	}
	return json.Marshal(results)
}
