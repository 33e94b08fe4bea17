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

// methodCapability maps every command (a method name) to its capability.
var methodCapability = func() map[string]string {
	out := map[string]string{}
	for _, c := range engine.Capabilities {
		for i := range c.Interface.NumMethod() {
			out[c.Interface.Method(i).Name] = c.Name
		}
	}
	return out
}()

// Methods lists every command, sorted.
func Methods() []string {
	out := make([]string, 0, len(methodCapability))
	for m := range methodCapability {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// MethodCapability is the capability a command belongs to ("" for no command).
func MethodCapability(method string) string { return methodCapability[method] }

var (
	contextType  = reflect.TypeFor[context.Context]()
	durationType = reflect.TypeFor[time.Duration]()
)

// dispatch calls method of e with params (a JSON array of the arguments after
// the context) and returns its results but the error as a JSON array. It serves
// every command the same way; only SendBatch, whose results hold errors, has a
// wire form of its own.
func dispatch(ctx context.Context, e engine.Engine, caps []string, method string, params json.RawMessage) (json.RawMessage, error) {
	results, err := call(ctx, e, caps, method, params)
	if err != nil {
		return nil, err
	}
	return json.Marshal(results)
}

// call is dispatch before the results are encoded: method's results but the
// error (durations in milliseconds); SendBatch's is its wire form.
func call(ctx context.Context, e engine.Engine, caps []string, method string, params json.RawMessage) ([]any, error) {
	capability, ok := methodCapability[method]
	if !ok || !slices.Contains(caps, capability) {
		return nil, &WireError{Code: codeUnsupported, Message: fmt.Sprintf("this engine does not serve %s", method)}
	}
	if method == "SendBatch" {
		var args []json.RawMessage
		var ms []engine.Outgoing
		if err := json.Unmarshal(params, &args); err != nil || len(args) != 1 || json.Unmarshal(args[0], &ms) != nil {
			return nil, fmt.Errorf("%w: bad params of SendBatch", engine.ErrRejected)
		}
		sent := e.(engine.BatchSender).SendBatch(ctx, ms)
		out := make([]sentWire, len(sent))
		for i, s := range sent {
			out[i] = sentWire{Key: s.Key, Error: EncodeError(s.Err)}
		}
		return []any{out}, nil
	}
	m := reflect.ValueOf(e).MethodByName(method)
	if !m.IsValid() {
		return nil, &WireError{Code: codeUnsupported, Message: fmt.Sprintf("this engine does not serve %s", method)}
	}
	t := m.Type()
	var raw []json.RawMessage
	if len(params) > 0 {
		if err := json.Unmarshal(params, &raw); err != nil {
			return nil, fmt.Errorf("%w: bad params of %s: %v", engine.ErrRejected, method, err)
		}
	}
	// Trailing params may be left out (they are the zero value): a server that
	// predates a method's newest argument still reaches the engine.
	if t.NumIn() == 0 || t.In(0) != contextType || len(raw) > t.NumIn()-1 {
		return nil, fmt.Errorf("%w: %s takes %d params, got %d", engine.ErrRejected, method, t.NumIn()-1, len(raw))
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
				return nil, fmt.Errorf("%w: bad param %d of %s: %v", engine.ErrRejected, i, method, err)
			}
			args = append(args, reflect.ValueOf(time.Duration(ms)*time.Millisecond))
			continue
		}
		if err := json.Unmarshal(raw[i-1], p.Interface()); err != nil {
			return nil, fmt.Errorf("%w: bad param %d of %s: %v", engine.ErrRejected, i, method, err)
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
		if v := outs[i]; v.Kind() == reflect.Slice && v.IsNil() {
			results[i] = reflect.MakeSlice(v.Type(), 0, 0).Interface() // a list, never null
		}
	}
	return results, nil
}
