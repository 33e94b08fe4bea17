package switchboard

import "time"

// Column types of a board.
const (
	ColumnStatus  = "status"  // one label of Options (the Status and Priority columns)
	ColumnDate    = "date"    // a date (the Date column, written through due_date)
	ColumnText    = "text"    // free text
	ColumnNumbers = "numbers" // a decimal number
)

// BoardOption is one label a status or priority column offers, with the background
// color the dashboard paints it in. A terminal option (Done, Paid, Lost, …) ends an
// item's life: the active view leaves such items out.
type BoardOption struct {
	Label    string `json:"label"`
	Bgcolor  string `json:"bgcolor"`
	Terminal bool   `json:"terminal,omitempty"`
}

// BoardColumn is one column of a board: its stable id, its title (the key of an
// item's cells), its type and, for status columns, the options it offers.
type BoardColumn struct {
	ID      string        `json:"column_id"`
	Title   string        `json:"title"`
	Type    string        `json:"type"`
	Options []BoardOption `json:"options"`
}

// BoardSource is the provenance of a board item: the chat and message a fact was
// extracted from, a short excerpt and when it was extracted (epoch milliseconds).
type BoardSource struct {
	ChatID      string `json:"chat_id,omitempty"`
	ChatName    string `json:"chat_name,omitempty"`
	MessageKey  string `json:"message_key,omitempty"`
	Excerpt     string `json:"excerpt,omitempty"`
	ExtractedAt int64  `json:"extracted_at,omitempty"`
}

// BoardItemMeta is the internal AI metadata record of a board item, stamped on
// creation and never shown as such: the dedupe fingerprint, the provenance the item
// was created with, how it was created, how many times the fact was seen and the
// history of changes with their notes.
type BoardItemMeta struct {
	Fingerprint string            `json:"fingerprint"`
	Source      *BoardSource      `json:"source,omitempty"`
	Via         string            `json:"via"`
	Sightings   int               `json:"sightings"`
	History     []BoardItemChange `json:"history,omitempty"`
}

// BoardItemChange is one entry of an item's history: when, which fields, and the
// note given with the change.
type BoardItemChange struct {
	At     time.Time `json:"at"`
	Fields []string  `json:"fields,omitempty"`
	Note   string    `json:"note,omitempty"`
}
