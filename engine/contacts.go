package engine

import "context"

// Capabilities of the contact operations (engine protocol capability names; a
// remote engine announces them in its hello).
const (
	CapCheckNumbers = "check_numbers"
	CapBlockList    = "block_list"
)

// NumberChecker is an engine that asks its network whether phone numbers are on
// it. CheckNumbers answers one NumberStatus per number, in the order given;
// numbers are E.164 digits without "+". The engine paces its queries itself
// (docs/contacts.md): a long list takes a while.
type NumberChecker interface {
	CheckNumbers(ctx context.Context, phones []string) ([]NumberStatus, error)
}

// NumberStatus is what the network answered about one phone number.
type NumberStatus struct {
	// Phone is the number asked (digits).
	Phone     string `json:"phone"`
	OnNetwork bool   `json:"onNetwork"`
	// ChatID is the number's chat id (<digits>@c.us) when on the network.
	ChatID string `json:"chatId,omitempty"`
	// LID is the contact's LID (<digits>@lid) when the network told it.
	LID          string `json:"lid,omitempty"`
	IsBusiness   bool   `json:"isBusiness,omitempty"`
	BusinessName string `json:"businessName,omitempty"`
}

// Blocker is an engine that keeps the account's block list. Contacts are chat
// ids (<digits>@c.us, or <digits>@lid when the number is unknown). Blocking a
// contact already blocked, or unblocking one that is not, succeeds. Changes
// made elsewhere (on the phone) arrive as EventBlock events.
type Blocker interface {
	Block(ctx context.Context, chatID string) error
	Unblock(ctx context.Context, chatID string) error
	// Blocklist lists the blocked contacts.
	Blocklist(ctx context.Context) ([]string, error)
}

// EventBlock: a contact was blocked or unblocked (Block).
const EventBlock EventType = "block"

// BlockChange is a change of the account's block list.
type BlockChange struct {
	ChatID  string `json:"chatId"`
	Blocked bool   `json:"blocked"`
}
