package engine

import "context"

// EventCall is someone calling the account (Event.Call).
const EventCall EventType = "call"

// Call is an incoming call offer.
type Call struct {
	// ID is the network's call id.
	ID string `json:"id"`
	// From is the caller's chat id (<digits>@c.us, or <digits>@lid when the
	// engine knows no phone number for it).
	From  string `json:"from"`
	Video bool   `json:"video,omitempty"`
	// Group marks a group call; GroupID is its group when the network says.
	Group   bool   `json:"group,omitempty"`
	GroupID string `json:"groupId,omitempty"`
	// Rejected is set by Switchboard when the engine's setting rejected the
	// call on arrival.
	Rejected bool `json:"rejected,omitempty"`
}

// CallRejecter is an engine that rejects incoming calls.
type CallRejecter interface {
	// RejectCall declines the call id from the caller (the Call's From).
	RejectCall(ctx context.Context, from, callID string) error
}
