package graph

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/boards"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/board"
	"github.com/switchboardhq/switchboard/ent/boarditem"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/graph/model"
)

// Bounds of board and item fields, from the reference contract.
const (
	maxBoardName        = 120
	maxBoardDescription = 500
	maxAgentID          = 200
	maxItemText         = 2000
	maxLabel            = 120
	maxDueDate          = 64
	maxCellValue        = 2000
	maxSourceID         = 256
	maxChatName         = 200
	maxExcerpt          = 2000
	maxNote             = 500
	maxBulkItems        = 500
	maxCandidates       = 500
	maxSimilarPerText   = 5
	defaultAgentID      = "user"
)

// How an item came to be, as its AI metadata record says.
const (
	viaCreate = "create"
	viaBulk   = "bulk"
)

// boardURL is the board's page in Switchboard's dashboard.
func (r *Resolver) boardURL(id string) string {
	return strings.TrimRight(r.PublicURL, "/") + "/dashboard/boards/" + url.PathEscape(id)
}

// itemURL is the item's page in Switchboard's dashboard.
func (r *Resolver) itemURL(it *ent.BoardItem) string {
	return r.boardURL(it.BoardID) + "/items/" + url.PathEscape(it.ID)
}

// textLen checks that an optional text is between lo and hi characters.
func textLen(p *switchboard.Problems, path string, s *string, lo, hi int) {
	if s == nil {
		return
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(*s)); n < lo || n > hi {
		code := "too_big"
		if n < lo {
			code = "too_small"
		}
		p.Add(path, code, "%s must be %d-%d characters (got %d)", path, lo, hi, n)
	}
}

// boardSpec is a validated openBoard input: the template to provision from and
// the board's own settings.
type boardSpec struct {
	tpl    boards.Template
	custom bool
	agent  string
	days   int
}

// checkBoardInput validates an openBoard input and picks its template.
func checkBoardInput(in model.BoardInput) (*boardSpec, error) {
	var p switchboard.Problems
	s := &boardSpec{agent: defaultAgentID, days: boards.DefaultRetentionDays}
	switch domain, kind := in.Domain, in.EntityKind; {
	case domain == nil && kind == nil:
		p.Add("domain", "invalid_type", "domain (one of %s) or entity_kind is required", strings.Join(boards.Domains(), ", "))
	case domain != nil && kind != nil:
		p.Add("entity_kind", "unrecognized_keys", "give domain or entity_kind, not both")
	case domain != nil:
		slug, custom := strings.CutPrefix(*domain, boards.CustomPrefix)
		if tpl, ok := boards.Builtin(*domain); ok {
			s.tpl = tpl
		} else if custom && slug != "" && boards.Slug(slug) == slug {
			s.tpl, s.custom = boards.Custom(slug, slug), true
		} else {
			p.Add("domain", "invalid_enum_value", "unknown domain %s: domain must be one of %s (or custom:<slug> of a custom board); pass entity_kind to open a board for another kind of entity",
				quote(*domain), strings.Join(boards.Domains(), ", "))
		}
	default:
		textLen(&p, "entity_kind", kind, 1, boards.MaxSlug)
		if slug := boards.Slug(*kind); slug == "" {
			p.Add("entity_kind", "invalid_string", "entity_kind must hold letters or digits")
		} else if tpl, ok := boards.Builtin(slug); ok {
			s.tpl = tpl
		} else {
			s.tpl, s.custom = boards.Custom(*kind, slug), true
		}
	}
	textLen(&p, "name", in.Name, 1, maxBoardName)
	textLen(&p, "description", in.Description, 1, maxBoardDescription)
	if in.Name != nil {
		s.tpl.Name = strings.TrimSpace(*in.Name)
	}
	if in.Description != nil {
		s.tpl.Description = strings.TrimSpace(*in.Description)
	}
	if a := in.AgentID; a != nil && strings.TrimSpace(*a) != "" {
		textLen(&p, "agent_id", a, 1, maxAgentID)
		s.agent = strings.TrimSpace(*a)
	}
	if d := in.MemoryRetentionDays; d != nil {
		if *d < 0 || *d > boards.MaxRetentionDays {
			p.Add("memory_retention_days", "too_big", "memory_retention_days must be between 0 and %d", boards.MaxRetentionDays)
		}
		s.days = *d
	}
	return s, p.Err(switchboard.EVALIDATION)
}

// openBoard is the use case behind openBoard: find the board of (agent, domain) or
// provision it. The unique index on (workspace, agent, domain) makes a concurrent
// second create fail; that call then finds the winner's board.
func (r *Resolver) openBoard(ctx context.Context, in model.BoardInput) (*ent.Board, error) {
	s, err := checkBoardInput(in)
	if err != nil {
		return nil, err
	}
	find := func() (*ent.Board, error) {
		return r.Client.Board.Query().Where(board.AgentID(s.agent), board.Domain(s.tpl.Domain)).Only(ctx)
	}
	if b, err := find(); !ent.IsNotFound(err) {
		return b, err
	}
	if s.custom && s.tpl.Description == "" {
		return nil, &switchboard.Error{Code: switchboard.EVALIDATION, Message: "description is required to open a custom board.",
			Details: []switchboard.Detail{{Path: "description", Code: "invalid_type", Message: "description is required for a custom entity_kind board (1-500 characters)"}}}
	}
	b, err := r.Client.Board.Create().SetAgentID(s.agent).SetDomain(s.tpl.Domain).SetName(s.tpl.Name).
		SetDescription(s.tpl.Description).SetMemoryRetentionDays(s.days).SetColumns(s.tpl.Columns).Save(ctx)
	if ent.IsConstraintError(err) {
		return find()
	}
	return b, err
}

// getBoard returns a board of the viewer's workspace or ENOTFOUND.
func (r *Resolver) getBoard(ctx context.Context, id string) (*ent.Board, error) {
	b, err := r.Client.Board.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No board with id %s.", quote(id))
	}
	return b, err
}

// listing is a checked page request: its bounds and its order by creation time.
type listing struct {
	limit, skip int
	order       func(*sql.Selector)
}

// checkListing validates limit, skip and order (asc or desc, desc by default).
func checkListing(limit, skip *int, order *string) (*listing, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	out := &listing{limit: l, skip: s, order: ent.Desc("created_at", "id")}
	switch {
	case order == nil || *order == "desc":
	case *order == "asc":
		out.order = ent.Asc("created_at", "id")
	default:
		return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: "order must be asc or desc.",
			Details: []switchboard.Detail{{Path: "order", Code: "invalid_enum_value", Message: "order must be asc or desc"}}}
	}
	return out, nil
}

// find counts every match of a query and fetches one page of it.
func find[T any](ctx context.Context, count func(context.Context) (int, error), page func(context.Context) ([]T, error)) ([]T, int, error) {
	total, err := count(ctx)
	if err != nil {
		return nil, 0, err
	}
	items, err := page(ctx)
	return items, total, err
}

// listBoards is the use case behind boardList.
func (r *Resolver) listBoards(ctx context.Context, f *model.BoardFilter, limit, skip *int) (*model.BoardPage, error) {
	if f == nil {
		f = &model.BoardFilter{}
	}
	pg, err := checkListing(limit, skip, f.Order)
	if err != nil {
		return nil, err
	}
	q := r.Client.Board.Query()
	if f.Domain != nil {
		q.Where(board.Domain(*f.Domain))
	}
	if f.AgentID != nil {
		q.Where(board.AgentID(*f.AgentID))
	}
	if f.AgentManaged != nil {
		q.Where(board.AgentManaged(*f.AgentManaged))
	}
	items, total, err := find(ctx, q.Clone().Count, q.Order(pg.order).Limit(pg.limit).Offset(pg.skip).All)
	if err != nil {
		return nil, err
	}
	return &model.BoardPage{Items: items, Limit: pg.limit, Skip: pg.skip, Total: total}, nil
}

// itemCount counts a board's items that are not soft-deleted.
func (r *Resolver) itemCount(ctx context.Context, b *ent.Board) (int, error) {
	return r.Client.BoardItem.Query().Where(boarditem.BoardID(b.ID), boarditem.DeletedAtIsNil()).Count(ctx)
}

// live selects a board's items that are not soft-deleted and were seen within
// its retention window as of now.
func live(b *ent.Board, now time.Time) predicate.BoardItem {
	p := []predicate.BoardItem{boarditem.BoardID(b.ID), boarditem.DeletedAtIsNil()}
	if b.MemoryRetentionDays > 0 {
		p = append(p, boarditem.LastSeenAtGTE(boards.Cutoff(now, b.MemoryRetentionDays)))
	}
	return boarditem.And(p...)
}

// column returns the board's column with id, if any.
func column(b *ent.Board, id string) *switchboard.BoardColumn {
	for i := range b.Columns {
		if b.Columns[i].ID == id {
			return &b.Columns[i]
		}
	}
	return nil
}

// resolveLabel resolves label (any case) to one of col's options; an unknown
// label is a problem that lists the valid ones. An empty label resolves to the
// empty option (none).
func resolveLabel(p *switchboard.Problems, path string, col *switchboard.BoardColumn, label string) *switchboard.BoardOption {
	label = strings.TrimSpace(label)
	if label == "" {
		return &switchboard.BoardOption{}
	}
	var valid []string
	if col != nil {
		for _, o := range col.Options {
			if strings.EqualFold(o.Label, label) {
				return &o
			}
			valid = append(valid, o.Label)
		}
	}
	p.Add(path, "invalid_enum_value", "unknown %s label %s; valid labels: %s", path[strings.LastIndexByte(path, '.')+1:],
		quote(label), strings.Join(valid, ", "))
	return nil
}

// terminalLabels lists the labels of the board's terminal statuses.
func terminalLabels(b *ent.Board) []string {
	var out []string
	if col := column(b, boards.StatusColumn); col != nil {
		for _, o := range col.Options {
			if o.Terminal {
				out = append(out, o.Label)
			}
		}
	}
	return out
}

// parseSince reads updated_since: an RFC 3339 date-time or epoch milliseconds.
func parseSince(raw string) (time.Time, error) {
	if ms, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		return t, nil
	}
	return time.Time{}, &switchboard.Error{Code: switchboard.EINVALID, Message: "updated_since must be an RFC 3339 date-time or epoch milliseconds.",
		Details: []switchboard.Detail{{Path: "updated_since", Code: "invalid_date", Message: "updated_since must be an RFC 3339 date-time or epoch milliseconds"}}}
}
