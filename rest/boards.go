package rest

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
)

// boardRecord is the spec's Board; Columns is left out of lists, as the reference
// lists boards without them.
type boardRecord struct {
	BoardID             string         `json:"board_id"`
	Name                string         `json:"name"`
	Domain              string         `json:"domain"`
	AgentManaged        bool           `json:"agent_managed"`
	MemoryRetentionDays int            `json:"memory_retention_days"`
	ItemCount           int            `json:"item_count"`
	WebURL              string         `json:"web_url"`
	CreatedAt           time.Time      `json:"created_at"`
	UpdatedAt           time.Time      `json:"updated_at"`
	Columns             []columnRecord `json:"columns,omitempty"`
}

type columnRecord struct {
	ColumnID string         `json:"column_id"`
	Title    string         `json:"title"`
	Type     string         `json:"type"`
	Options  []optionRecord `json:"options"`
}

type optionRecord struct {
	Label   string `json:"label"`
	Bgcolor string `json:"bgcolor"`
}

func newOptionRecord(o *switchboard.BoardOption) *optionRecord {
	if o == nil {
		return nil
	}
	return &optionRecord{Label: o.Label, Bgcolor: o.Bgcolor}
}

// newBoardRecord renders b, with its columns when withColumns.
func (s *server) newBoardRecord(ctx context.Context, b *ent.Board, withColumns bool) (boardRecord, error) {
	count, err := s.board.ItemCount(ctx, b)
	if err != nil {
		return boardRecord{}, err
	}
	url, _ := s.board.WebURL(ctx, b) // reads the row: cannot fail
	rec := boardRecord{BoardID: b.ID, Name: b.Name, Domain: b.Domain, AgentManaged: b.AgentManaged,
		MemoryRetentionDays: b.MemoryRetentionDays, ItemCount: count, WebURL: url,
		CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC()}
	if withColumns {
		rec.Columns = []columnRecord{}
		for _, c := range b.Columns {
			col := columnRecord{ColumnID: c.ID, Title: c.Title, Type: c.Type, Options: []optionRecord{}}
			for _, o := range c.Options {
				col.Options = append(col.Options, *newOptionRecord(&o))
			}
			rec.Columns = append(rec.Columns, col)
		}
	}
	return rec, nil
}

// itemRecord is the spec's Board item.
type itemRecord struct {
	ItemID     string                   `json:"item_id"`
	Text       string                   `json:"text"`
	Status     *optionRecord            `json:"status,omitempty"`
	Priority   *optionRecord            `json:"priority,omitempty"`
	DueDate    string                   `json:"due_date,omitempty"`
	Cells      map[string]string        `json:"cells"`
	Source     *switchboard.BoardSource `json:"source,omitempty"`
	Confidence *float64                 `json:"confidence,omitempty"`
	LastSeenAt int64                    `json:"last_seen_at"`
	WebURL     string                   `json:"web_url"`
	CreatedAt  time.Time                `json:"created_at"`
	UpdatedAt  time.Time                `json:"updated_at"`
}

// newItemRecord renders it; the field resolvers it calls read the row and cannot fail.
func (s *server) newItemRecord(ctx context.Context, it *ent.BoardItem) itemRecord {
	status, _ := s.item.Status(ctx, it)
	priority, _ := s.item.Priority(ctx, it)
	url, _ := s.item.WebURL(ctx, it)
	cells := it.Cells
	if cells == nil {
		cells = map[string]string{}
	}
	return itemRecord{ItemID: it.ID, Text: it.Text, Status: newOptionRecord(status), Priority: newOptionRecord(priority),
		DueDate: it.DueDate, Cells: cells, Source: it.Source, Confidence: it.Confidence,
		LastSeenAt: it.LastSeenAt.UnixMilli(), WebURL: url, CreatedAt: it.CreatedAt.UTC(), UpdatedAt: it.UpdatedAt.UTC()}
}

func (s *server) newItemRecords(ctx context.Context, items []*ent.BoardItem) []itemRecord {
	out := make([]itemRecord, len(items))
	for i, it := range items {
		out[i] = s.newItemRecord(ctx, it)
	}
	return out
}

// boardBody is the body of POST /v1/boards.
type boardBody struct {
	Domain              *string `json:"domain"`
	EntityKind          *string `json:"entity_kind"`
	Name                *string `json:"name"`
	Description         *string `json:"description"`
	AgentID             *string `json:"agent_id"`
	MemoryRetentionDays *int    `json:"memory_retention_days"`
}

// openBoard serves POST /v1/boards (spec endpoint 12).
func (s *server) openBoard(w http.ResponseWriter, r *http.Request) error {
	var b boardBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	board, err := s.mutation.OpenBoard(r.Context(), model.BoardInput{Domain: b.Domain, EntityKind: b.EntityKind,
		Name: b.Name, Description: b.Description, AgentID: b.AgentID, MemoryRetentionDays: b.MemoryRetentionDays})
	if err != nil {
		return err
	}
	return s.writeBoard(w, r, board)
}

func (s *server) writeBoard(w http.ResponseWriter, r *http.Request, b *ent.Board) error {
	rec, err := s.newBoardRecord(r.Context(), b, true)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, rec)
}

// getBoard serves GET /v1/boards/{id}.
func (s *server) getBoard(w http.ResponseWriter, r *http.Request) error {
	b, err := s.query.Board(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return s.writeBoard(w, r, b)
}

// listBoards serves GET /v1/boards.
func (s *server) listBoards(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	f := &model.BoardFilter{Domain: queryString(r, "domain"), AgentID: queryString(r, "agent_id"),
		AgentManaged: queryBool(r, "agent_managed", &p), Order: queryString(r, "order")}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.BoardList(r.Context(), f, limit, skip)
	if err != nil {
		return err
	}
	out := make([]boardRecord, len(page.Items))
	for i, b := range page.Items {
		if out[i], err = s.newBoardRecord(r.Context(), b, false); err != nil {
			return err
		}
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// listBoardItems serves GET /v1/boards/{id}/items.
func (s *server) listBoardItems(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	f := &model.BoardItemFilter{ActiveOnly: queryBool(r, "active_only", &p), Status: queryString(r, "status"),
		UpdatedSince: queryString(r, "updated_since"), Order: queryString(r, "order")}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.BoardItems(r.Context(), chi.URLParam(r, "id"), f, limit, skip)
	if err != nil {
		return err
	}
	return writeList(w, s.newItemRecords(r.Context(), page.Items), page.Limit, page.Skip, page.Total)
}

// itemBody is the body of an item: create, one of a bulk upsert, or a patch
// (deleted and note only there, allow_duplicate never).
type itemBody struct {
	Text           *string                  `json:"text"`
	Status         *string                  `json:"status"`
	Priority       *string                  `json:"priority"`
	DueDate        *string                  `json:"due_date"`
	Cells          map[string]any           `json:"cells"`
	Source         *switchboard.BoardSource `json:"source"`
	Confidence     *float64                 `json:"confidence"`
	AllowDuplicate *bool                    `json:"allow_duplicate"`
	Deleted        *bool                    `json:"deleted"`
	Note           *string                  `json:"note"`
}

// cells turns the cells object (values strings or numbers; null clears) into
// the core's cell list, in key order.
func (b *itemBody) cells(prefix string) ([]*model.BoardCellInput, error) {
	if b.Cells == nil {
		return nil, nil
	}
	out := []*model.BoardCellInput{}
	for _, k := range slices.Sorted(maps.Keys(b.Cells)) {
		var v string
		switch x := b.Cells[k].(type) {
		case nil:
		case string:
			v = x
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			return nil, invalidBody(prefix+"cells."+k, "invalid_type", "cells."+k+" must be a string or a number.")
		}
		out = append(out, &model.BoardCellInput{Column: k, Value: v})
	}
	return out, nil
}

// input is the body of a new item; prefix names it within a bulk body.
func (b *itemBody) input(prefix string) (*model.BoardItemInput, error) {
	for name, set := range map[string]bool{"deleted": b.Deleted != nil, "note": b.Note != nil} {
		if set {
			return nil, invalidBody(prefix+name, "unrecognized_keys", name+" can only be given when updating an item.")
		}
	}
	cells, err := b.cells(prefix)
	if err != nil {
		return nil, err
	}
	in := &model.BoardItemInput{Status: b.Status, Priority: b.Priority, DueDate: b.DueDate, Cells: cells,
		Source: b.Source, Confidence: b.Confidence, AllowDuplicate: b.AllowDuplicate}
	if b.Text != nil {
		in.Text = *b.Text
	}
	return in, nil
}

// createBoardItem serves POST /v1/boards/{id}/items (spec endpoint 13): 201 with
// the new item, or 200 with the live item of the same fingerprint that took it.
func (s *server) createBoardItem(w http.ResponseWriter, r *http.Request) error {
	var b itemBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	in, err := b.input("")
	if err != nil {
		return err
	}
	p, err := s.mutation.CreateBoardItem(r.Context(), chi.URLParam(r, "id"), *in)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if p.Merged {
		status = http.StatusOK
	}
	return writeData(w, status, s.newItemRecord(r.Context(), p.Item))
}

// updateBoardItem serves PATCH /v1/boards/{id}/items/{itemId}.
func (s *server) updateBoardItem(w http.ResponseWriter, r *http.Request) error {
	var b itemBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.AllowDuplicate != nil {
		return invalidBody("allow_duplicate", "unrecognized_keys", "allow_duplicate can only be given when creating an item.")
	}
	cells, err := b.cells("")
	if err != nil {
		return err
	}
	it, err := s.mutation.UpdateBoardItem(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "itemId"),
		model.BoardItemPatch{Text: b.Text, Status: b.Status, Priority: b.Priority, DueDate: b.DueDate, Cells: cells,
			Source: b.Source, Confidence: b.Confidence, Deleted: b.Deleted, Note: b.Note})
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, s.newItemRecord(r.Context(), it))
}

// bulkBody is the body of POST /v1/boards/{id}/items/bulk.
type bulkBody struct {
	Items []itemBody `json:"items"`
	Mode  *string    `json:"mode"`
}

// boardSummary is the board as a bulk upsert's report names it.
type boardSummary struct {
	BoardID     string `json:"board_id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Domain      string `json:"domain"`
	WebURL      string `json:"web_url"`
}

// mergeReport is the answer of a bulk upsert.
type mergeReport struct {
	Created   []itemRecord `json:"created"`
	Updated   []itemRecord `json:"updated"`
	Unchanged int          `json:"unchanged"`
	Board     boardSummary `json:"board"`
}

// upsertBoardItems serves POST /v1/boards/{id}/items/bulk.
func (s *server) upsertBoardItems(w http.ResponseWriter, r *http.Request) error {
	var b bulkBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	items := make([]*model.BoardItemInput, len(b.Items))
	for i := range b.Items {
		var err error
		if items[i], err = b.Items[i].input("items." + strconv.Itoa(i) + "."); err != nil {
			return err
		}
	}
	rep, err := s.mutation.UpsertBoardItems(r.Context(), chi.URLParam(r, "id"), items, b.Mode)
	if err != nil {
		return err
	}
	url, _ := s.board.WebURL(r.Context(), rep.Board)
	return writeData(w, http.StatusOK, mergeReport{Created: s.newItemRecords(r.Context(), rep.Created),
		Updated: s.newItemRecords(r.Context(), rep.Updated), Unchanged: rep.Unchanged,
		Board: boardSummary{BoardID: rep.Board.ID, Name: rep.Board.Name, Description: rep.Board.Description,
			Domain: rep.Board.Domain, WebURL: url}})
}

// similarBody is the body of POST /v1/boards/{id}/items/find-similar.
type similarBody struct {
	Candidates []model.BoardCandidateInput `json:"candidates"`
}

// similarMatch is one match of find-similar.
type similarMatch struct {
	CandidateIndex int     `json:"candidate_index"`
	ItemID         string  `json:"item_id"`
	Text           string  `json:"text"`
	Score          float64 `json:"score"`
}

// similarResult is the answer of find-similar: the matches, and the indexes of
// the candidates that matched nothing.
type similarResult struct {
	Matches []similarMatch `json:"matches"`
	Misses  []int          `json:"misses"`
}

// findSimilarBoardItems serves POST /v1/boards/{id}/items/find-similar.
func (s *server) findSimilarBoardItems(w http.ResponseWriter, r *http.Request) error {
	var b similarBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	candidates := make([]*model.BoardCandidateInput, len(b.Candidates))
	for i := range b.Candidates {
		candidates[i] = &b.Candidates[i]
	}
	res, err := s.query.FindSimilarBoardItems(r.Context(), chi.URLParam(r, "id"), candidates)
	if err != nil {
		return err
	}
	matches := make([]similarMatch, len(res.Matches))
	for i, m := range res.Matches {
		matches[i] = similarMatch{CandidateIndex: m.CandidateIndex, ItemID: m.ItemID, Text: m.Text, Score: m.Score}
	}
	return writeData(w, http.StatusOK, similarResult{Matches: matches, Misses: res.Misses})
}
