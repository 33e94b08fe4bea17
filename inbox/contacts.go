package inbox

import (
	"context"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/contact"
)

// Reading the address book the engines report.

// ContactFilter selects contacts; its zero value selects them all.
type ContactFilter struct {
	// Search selects the contacts whose name or push name contains it
	// (case-folded), or whose id contains it; "" all.
	Search string
	// Engine selects the contacts the engine (number) last reported; "" all.
	Engine string
}

func (s Store) contacts(f ContactFilter) *ent.ContactQuery {
	q := s.Client.Contact.Query()
	if t := f.Search; t != "" {
		q.Where(contact.Or(contact.NameContainsFold(t), contact.PushNameContainsFold(t), contact.JidContains(t)))
	}
	if f.Engine != "" {
		q.Where(contact.EngineID(f.Engine))
	}
	return q
}

// CountContacts is how many contacts f selects.
func (s Store) CountContacts(ctx context.Context, f ContactFilter) (int, error) {
	return s.contacts(f).Count(ctx)
}

// Contacts returns a page of the contacts f selects: saved ones first, then by
// name and id.
func (s Store) Contacts(ctx context.Context, f ContactFilter, limit, skip int) ([]*ent.Contact, error) {
	return s.contacts(f).Order(ent.Desc(contact.FieldSaved), ent.Asc(contact.FieldName), ent.Asc(contact.FieldJid)).
		Limit(limit).Offset(skip).All(ctx)
}

// ContactsOf returns the stored contacts among jids, in no particular order.
func (s Store) ContactsOf(ctx context.Context, jids ...string) ([]*ent.Contact, error) {
	return s.Client.Contact.Query().Where(contact.JidIn(jids...)).All(ctx)
}

// ContactConnection is a Relay connection of the contacts, shaped by opts.
func (s Store) ContactConnection(ctx context.Context, c Cursors, opts ...ent.ContactPaginateOption) (*ent.ContactConnection, error) {
	return s.Client.Contact.Query().Paginate(ctx, c.After, c.First, c.Before, c.Last, opts...)
}
