package rest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
)

// contactRecord is the reference's contact shape, with the contact's LID when
// known (chatId is its phone-number form once the number is known, else the LID).
type contactRecord struct {
	ChatID     string `json:"chatId"`
	LID        string `json:"lid,omitempty"`
	Name       string `json:"name,omitempty"`
	IsBusiness bool   `json:"isBusiness"`
	// EngineID is the engine (number) that last reported the contact (a
	// Switchboard addition).
	EngineID string `json:"engineId,omitempty"`
}

// groupItem is the spec's group list item.
type groupItem struct {
	ID               string  `json:"id"`
	Name             string  `json:"name,omitempty"`
	Description      string  `json:"description,omitempty"`
	Owner            string  `json:"owner,omitempty"`
	CreatedAt        string  `json:"createdAt,omitempty"`
	LastMessageAt    *string `json:"lastMessageAt,omitempty"`
	ParticipantCount int     `json:"participantCount"`
	Restrict         bool    `json:"restrict"`
}

func newContactRecord(c *ent.Contact) contactRecord {
	name := c.Name
	if name == "" {
		name = c.PushName
	}
	lid := c.Lid
	if lid == "" && engine.IsLID(c.Jid) {
		lid = c.Jid
	}
	return contactRecord{ChatID: c.Jid, LID: lid, Name: name, IsBusiness: c.IsBusiness, EngineID: c.EngineID}
}

// getContact serves GET /v1/contacts/{id}: a contact by its chat id (or E.164
// number) or by its LID.
func (s *server) getContact(w http.ResponseWriter, r *http.Request) error {
	c, err := s.query.Contact(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newContactRecord(c))
}

// allContacts is the limit that asks for every contact in one answer.
const allContacts = -1

// listContacts serves GET /v1/contacts: pages of 10 by default (1-200), or with
// limit=-1 every contact, streamed a chunk at a time (docs/conversations.md).
func (s *server) listContacts(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	_ = queryBool(r, "includeArchive", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	if limit != nil && *limit == allContacts {
		return s.streamContacts(w, r, skip)
	}
	page, err := s.query.ContactList(r.Context(), queryString(r, "searchToken"), queryString(r, "engineId"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]contactRecord, len(page.Items))
	for i, c := range page.Items {
		out[i] = newContactRecord(c)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// streamContacts answers limit=-1: the list envelope whose data is every contact
// from skip on, written as the core reads them, with limit echoed as -1. Once the
// first bytes are out an error can only cut the body short.
func (s *server) streamContacts(w http.ResponseWriter, r *http.Request, skip *int) error {
	var (
		bw    *bufio.Writer
		enc   *json.Encoder
		total int
		n     int
	)
	err := s.core.AllContacts(r.Context(), queryString(r, "searchToken"), queryString(r, "engineId"), skip, func(t int) {
		total = t
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		bw = bufio.NewWriterSize(w, 32<<10)
		enc = json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		_, _ = bw.WriteString(`{"success":true,"data":[`)
	}, func(chunk []*ent.Contact) error {
		for _, c := range chunk {
			if n > 0 {
				_ = bw.WriteByte(',')
			}
			n++
			if err := enc.Encode(newContactRecord(c)); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	if bw == nil {
		return err // nothing written yet: answered with the error envelope
	}
	if err != nil {
		slog.WarnContext(r.Context(), "contacts stream cut short", "err", err)
	} else {
		from := 0
		if skip != nil {
			from = *skip
		}
		fmt.Fprintf(bw, `],"limit":%d,"skip":%d,"total":%d}`+"\n", allContacts, from, total)
		_ = bw.Flush()
	}
	return nil
}

// commonGroups serves GET /v1/contacts/{id}/common_groups (spec endpoint 8).
func (s *server) commonGroups(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.CommonGroups(r.Context(), chi.URLParam(r, "id"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]groupItem, len(page.Items))
	for i, c := range page.Items {
		out[i] = newGroupItem(c)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}
