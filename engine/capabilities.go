package engine

import (
	"context"
	"reflect"
	"slices"
)

// Capability is a group of engine methods an engine serves or not: the name a
// remote engine announces in its hello, and the interface whose methods are
// its commands.
type Capability struct {
	Name      string
	Interface reflect.Type
}

// sender is the part of Engine a command can reach.
type sender interface {
	Send(ctx context.Context, m Outgoing) (Key, error)
}

// Capabilities are every capability of the engine protocol, in the order a
// hello lists them (docs/engines.md).
var Capabilities = []Capability{
	{"send", reflect.TypeFor[sender]()},
	{"send_batch", reflect.TypeFor[BatchSender]()},
	{"history_sync", reflect.TypeFor[HistorySyncer]()},
	{"history_load", reflect.TypeFor[HistoryLoader]()},
	{"chat_actions", reflect.TypeFor[ChatActor]()},
	{"media", reflect.TypeFor[MediaFetcher]()},
	{"typing", reflect.TypeFor[Typist]()},
	{"presence", reflect.TypeFor[ChatPresencer]()},
	{"edit", reflect.TypeFor[Editor]()},
	{"revoke", reflect.TypeFor[Revoker]()},
	{"newsletters", reflect.TypeFor[NewsletterCreator]()},
	{"groups", reflect.TypeFor[GroupAdmin]()},
	{"pairing", reflect.TypeFor[Pairer]()},
	{"logout", reflect.TypeFor[LoggerOut]()},
	{"restart", reflect.TypeFor[Restarter]()},
	{"profile", reflect.TypeFor[Profiler]()},
	{"calls", reflect.TypeFor[CallRejecter]()},
	{CapCheckNumbers, reflect.TypeFor[NumberChecker]()},
	{CapBlockList, reflect.TypeFor[Blocker]()},
	{CapContactDetails, reflect.TypeFor[ContactDetailer]()},
	{CapDisappearing, reflect.TypeFor[DisappearingTimer]()},
	{CapGroupInvites, reflect.TypeFor[GroupInviter]()},
	{CapGroupRequests, reflect.TypeFor[GroupRequester]()},
	{CapCommunities, reflect.TypeFor[Communities]()},
	{CapNewsletterFollow, reflect.TypeFor[NewsletterFollower]()},
	{CapStatus, reflect.TypeFor[StatusPoster]()},
}

// CapabilitiesOf lists the capabilities an engine's type implements (a typed
// nil pointer will do).
func CapabilitiesOf(e any) []string {
	t := reflect.TypeOf(e)
	var out []string
	for _, c := range Capabilities {
		if t != nil && t.Implements(c.Interface) {
			out = append(out, c.Name)
		}
	}
	return out
}

// KnownCapability reports whether name is a capability of the protocol.
func KnownCapability(name string) bool {
	return slices.ContainsFunc(Capabilities, func(c Capability) bool { return c.Name == name })
}

// Serves reports whether an engine serves a capability: a remote engine says
// so in its hello (its Capabilities method); an in-process one by its type.
func Serves(eng Engine, capability string) bool {
	if c, ok := eng.(interface{ Capabilities() []string }); ok {
		return slices.Contains(c.Capabilities(), capability)
	}
	t := reflect.TypeOf(eng)
	i := slices.IndexFunc(Capabilities, func(c Capability) bool { return c.Name == capability })
	return t != nil && i >= 0 && t.Implements(Capabilities[i].Interface)
}
