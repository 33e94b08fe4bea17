// Package boards holds what AI memory boards are made of apart from their use
// cases: the domain templates a board is provisioned from, the fingerprint that
// finds a fact again, the similarity ranking of find-similar, and the retention
// purge the periodic prune task runs. The use cases themselves live in package graph.
package boards

import (
	"strings"

	"github.com/switchboardhq/switchboard"
)

// Titles and ids of the columns every template has.
const (
	StatusColumn   = "status"
	PriorityColumn = "priority"
	DateColumn     = "date"
	SourceTitle    = "Source"
)

// CustomPrefix starts the domain of a board opened for a custom entity kind.
const CustomPrefix = "custom:"

// MaxSlug bounds the slug of a custom entity kind (the reference's entity_kind bound).
const MaxSlug = 40

// Template is what a new board of a domain is provisioned with.
type Template struct {
	Domain      string
	Name        string
	Description string
	Columns     []switchboard.BoardColumn
}

// Colors of the options, the dashboard's palette.
const (
	grey   = "#c4c4c4"
	blue   = "#579bfc"
	orange = "#fdab3d"
	purple = "#a25ddc"
	green  = "#00c875"
	red    = "#e2445c"
	dark   = "#333333"
)

func option(label, color string) switchboard.BoardOption {
	return switchboard.BoardOption{Label: label, Bgcolor: color}
}

func terminal(label, color string) switchboard.BoardOption {
	return switchboard.BoardOption{Label: label, Bgcolor: color, Terminal: true}
}

// column returns a column whose id is the slug of its title.
func column(title, typ string, options ...switchboard.BoardOption) switchboard.BoardColumn {
	if options == nil {
		options = []switchboard.BoardOption{}
	}
	return switchboard.BoardColumn{ID: strings.ReplaceAll(Slug(title), "-", "_"), Title: title, Type: typ, Options: options}
}

// columns returns the columns every template starts with (Status, Priority, Date),
// then extra, then Source.
func columns(status, priority []switchboard.BoardOption, extra ...switchboard.BoardColumn) []switchboard.BoardColumn {
	out := []switchboard.BoardColumn{
		column("Status", switchboard.ColumnStatus, status...),
		column("Priority", switchboard.ColumnStatus, priority...),
		column("Date", switchboard.ColumnDate),
	}
	out = append(out, extra...)
	return append(out, column(SourceTitle, switchboard.ColumnText))
}

var lowMediumHigh = []switchboard.BoardOption{option("Low", blue), option("Medium", orange), option("High", red), option("Urgent", dark)}

// builtin are the domains Switchboard ships, in the order they are listed.
var builtin = []Template{
	{
		Domain: "tasks", Name: "Tasks", Description: "Action items and follow-ups the agent picked up from chats.",
		Columns: columns(
			[]switchboard.BoardOption{option("To do", grey), option("In progress", orange), option("Waiting", purple),
				terminal("Done", green), terminal("Cancelled", dark)},
			lowMediumHigh,
			column("Owner", switchboard.ColumnText)),
	},
	{
		Domain: "leads", Name: "Leads", Description: "Prospects the agent found in conversations, and how far along they are.",
		Columns: columns(
			[]switchboard.BoardOption{option("New", grey), option("Contacted", blue), option("Qualified", purple),
				option("Proposal", orange), terminal("Won", green), terminal("Lost", red)},
			[]switchboard.BoardOption{option("Cold", blue), option("Warm", orange), option("Hot", red)},
			column("Company", switchboard.ColumnText), column("Email", switchboard.ColumnText),
			column("Phone", switchboard.ColumnText), column("Value", switchboard.ColumnNumbers)),
	},
	{
		Domain: "invoices", Name: "Invoices", Description: "Invoices and payments mentioned in chats, and whether they are settled.",
		Columns: columns(
			[]switchboard.BoardOption{option("Draft", grey), option("Sent", blue), option("Overdue", red),
				terminal("Paid", green), terminal("Cancelled", dark)},
			[]switchboard.BoardOption{option("Low", blue), option("Normal", orange), option("High", red)},
			column("Customer", switchboard.ColumnText), column("Invoice number", switchboard.ColumnText),
			column("Amount", switchboard.ColumnNumbers), column("Currency", switchboard.ColumnText)),
	},
}

// Domains lists the built-in domains.
func Domains() []string {
	out := make([]string, len(builtin))
	for i, t := range builtin {
		out[i] = t.Domain
	}
	return out
}

// Builtin returns the template of a built-in domain.
func Builtin(domain string) (Template, bool) {
	for _, t := range builtin {
		if t.Domain == domain {
			t.Columns = cloneColumns(t.Columns)
			return t, true
		}
	}
	return Template{}, false
}

// Custom returns the template of a board for a custom entity kind: domain
// custom:<slug>, named "🤖 <kind>", with the generic Status, Priority, Date and
// Source columns. The caller checks that slug is not empty.
func Custom(kind, slug string) Template {
	return Template{
		Domain: CustomPrefix + slug,
		Name:   "🤖 " + strings.TrimSpace(kind),
		Columns: columns(
			[]switchboard.BoardOption{option("New", grey), option("In progress", orange), terminal("Done", green)},
			lowMediumHigh),
	}
}

func cloneColumns(cols []switchboard.BoardColumn) []switchboard.BoardColumn {
	out := make([]switchboard.BoardColumn, len(cols))
	for i, c := range cols {
		c.Options = append([]switchboard.BoardOption{}, c.Options...)
		out[i] = c
	}
	return out
}

// Slug turns an entity kind into its slug: its normalized form (see Normalize)
// with dashes for spaces, at most MaxSlug long ("Follow-ups!" is "follow-ups").
func Slug(s string) string {
	slug := strings.ReplaceAll(Normalize(s), " ", "-")
	if r := []rune(slug); len(r) > MaxSlug {
		return strings.TrimRight(string(r[:MaxSlug]), "-")
	}
	return slug
}
