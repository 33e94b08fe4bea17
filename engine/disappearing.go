package engine

import "context"

// CapDisappearing is the capability of reading and setting chats'
// disappearing-message timers (engine protocol capability name).
const CapDisappearing = "disappearing"

// DisappearingTimers are the timers WhatsApp allows a chat's disappearing
// messages (seconds): off, 24 hours, 7 days, 90 days.
var DisappearingTimers = []uint32{0, 86400, 604800, 7776000}

// DisappearingTimer is an engine that reads and sets a chat's disappearing
// messages timer (seconds; 0 is off). Chats are chat ids (<digits>@c.us,
// <digits>@lid or <id>@g.us). Once set, every message the engine sends to the
// chat carries the timer.
type DisappearingTimer interface {
	// DisappearingTimer reads the chat's timer (0 when off or never set).
	DisappearingTimer(ctx context.Context, chatID string) (uint32, error)
	// SetDisappearingTimer sets the chat's timer, one of DisappearingTimers.
	SetDisappearingTimer(ctx context.Context, chatID string, seconds uint32) error
}
