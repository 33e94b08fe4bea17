package graph

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/boards"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/boarditem"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/storage"
)

// A board's items: listing, checking, creating, merging, updating and finding similar ones.

// listItems is the use case behind boardItems.
func (r *Resolver) listItems(ctx context.Context, boardID string, f *model.BoardItemFilter, limit, skip *int) (*model.BoardItemPage, error) {
	if f == nil {
		f = &model.BoardItemFilter{}
	}
	pg, err := checkListing(limit, skip, f.Order)
	if err != nil {
		return nil, err
	}
	b, err := r.getBoard(ctx, boardID)
	if err != nil {
		return nil, err
	}
	q := r.Client.BoardItem.Query().Where(boarditem.BoardID(b.ID), boarditem.DeletedAtIsNil())
	if f.Status != nil {
		var p switchboard.Problems
		o := resolveLabel(&p, "status", column(b, boards.StatusColumn), *f.Status)
		if err := p.Err(switchboard.EVALIDATION); err != nil {
			return nil, err
		}
		if o.Label == "" {
			q.Where(boarditem.StatusLabelIsNil())
		} else {
			q.Where(boarditem.StatusLabel(o.Label))
		}
	}
	if f.UpdatedSince != nil {
		since, err := parseSince(*f.UpdatedSince)
		if err != nil {
			return nil, err
		}
		q.Where(boarditem.UpdatedAtGTE(since))
	}
	if f.ActiveOnly != nil && *f.ActiveOnly {
		q.Where(live(b, r.now()))
		if t := terminalLabels(b); len(t) > 0 {
			q.Where(boarditem.Or(boarditem.StatusLabelIsNil(), boarditem.StatusLabelNotIn(t...)))
		}
	}
	items, total, err := find(ctx, q.Clone().Count, q.Order(pg.order).Limit(pg.limit).Offset(pg.skip).All)
	if err != nil {
		return nil, err
	}
	return &model.BoardItemPage{Items: items, Limit: pg.limit, Skip: pg.skip, Total: total}, nil
}

// itemFields are the fields an item input and an item patch share.
type itemFields struct {
	Text       *string
	Status     *string
	Priority   *string
	DueDate    *string
	Cells      []*model.BoardCellInput
	Source     *switchboard.BoardSource
	Confidence *float64
}

func newItemFields(in *model.BoardItemInput) itemFields {
	return itemFields{Text: &in.Text, Status: in.Status, Priority: in.Priority, DueDate: in.DueDate,
		Cells: in.Cells, Source: in.Source, Confidence: in.Confidence}
}

// itemDraft is an item input checked and resolved against its board. A nil field
// was not given; an empty option or due date clears it, an empty cell value
// removes the cell.
type itemDraft struct {
	text       *string
	status     *switchboard.BoardOption
	priority   *switchboard.BoardOption
	dueDate    *string
	cells      map[string]string
	source     *switchboard.BoardSource
	confidence *float64
}

// checkItem validates f against board b; problem paths start with prefix.
func checkItem(p *switchboard.Problems, prefix string, b *ent.Board, f itemFields) itemDraft {
	d := itemDraft{source: f.Source, confidence: f.Confidence}
	if f.Text != nil {
		textLen(p, prefix+"text", f.Text, 1, maxItemText)
		t := strings.TrimSpace(*f.Text)
		d.text = &t
	}
	for _, l := range []struct {
		name  string
		label *string
		dst   **switchboard.BoardOption
	}{{boards.StatusColumn, f.Status, &d.status}, {boards.PriorityColumn, f.Priority, &d.priority}} {
		if l.label == nil {
			continue
		}
		if utf8.RuneCountInString(*l.label) > maxLabel {
			p.Add(prefix+l.name, "too_big", "%s must be at most %d characters", l.name, maxLabel)
			continue
		}
		*l.dst = resolveLabel(p, prefix+l.name, column(b, l.name), *l.label)
	}
	if f.DueDate != nil {
		due := strings.TrimSpace(*f.DueDate)
		if !validDate(due) || len(due) > maxDueDate {
			p.Add(prefix+"due_date", "invalid_date", "due_date must be a date (YYYY-MM-DD) or an RFC 3339 date-time")
		}
		d.dueDate = &due
	}
	d.cells = checkCells(p, prefix, b, f.Cells)
	if s := f.Source; s != nil {
		for _, t := range []struct {
			name string
			v    string
			max  int
		}{{"chat_id", s.ChatID, maxSourceID}, {"chat_name", s.ChatName, maxChatName}, {"message_key", s.MessageKey, maxSourceID}, {"excerpt", s.Excerpt, maxExcerpt}} {
			if utf8.RuneCountInString(t.v) > t.max {
				p.Add(prefix+"source."+t.name, "too_big", "source.%s must be at most %d characters", t.name, t.max)
			}
		}
		if s.ExtractedAt < 0 {
			p.Add(prefix+"source.extracted_at", "too_small", "source.extracted_at must be epoch milliseconds")
		}
		if _, ok := d.cells[boards.SourceTitle]; !ok && s.ChatName != "" && slices.ContainsFunc(b.Columns, isSourceColumn) {
			if d.cells == nil {
				d.cells = map[string]string{}
			}
			d.cells[boards.SourceTitle] = s.ChatName // the board's Source cell shows where a fact came from
		}
	}
	if c := f.Confidence; c != nil && !(*c >= 0 && *c <= 1) {
		p.Add(prefix+"confidence", "too_big", "confidence must be between 0 and 1")
	}
	return d
}

func isSourceColumn(c switchboard.BoardColumn) bool { return c.Title == boards.SourceTitle }

// validDate reports whether s is empty, a date or an RFC 3339 date-time.
func validDate(s string) bool {
	if s == "" {
		return true
	}
	_, err := time.Parse(time.DateOnly, s)
	if err != nil {
		_, err = time.Parse(time.RFC3339, s)
	}
	return err == nil
}

// checkCells validates cells against the board's columns: each names a text or
// number column by its title (any case); status, priority and the date have their
// own fields. It returns the cells keyed by the column's title.
func checkCells(p *switchboard.Problems, prefix string, b *ent.Board, cells []*model.BoardCellInput) map[string]string {
	if cells == nil {
		return nil
	}
	var writable []string
	for _, c := range b.Columns {
		if c.Type == switchboard.ColumnText || c.Type == switchboard.ColumnNumbers {
			writable = append(writable, c.Title)
		}
	}
	out := map[string]string{}
	for _, in := range cells {
		path := prefix + "cells." + in.Column
		i := slices.IndexFunc(b.Columns, func(c switchboard.BoardColumn) bool { return strings.EqualFold(c.Title, strings.TrimSpace(in.Column)) })
		switch {
		case i < 0:
			p.Add(path, "unrecognized_keys", "no column titled %s; cells can name %s", quote(in.Column), strings.Join(writable, ", "))
			continue
		case !slices.Contains(writable, b.Columns[i].Title):
			p.Add(path, "invalid_type", "the %s column is set through its own field (%s), not cells", b.Columns[i].Title, ownField(b.Columns[i]))
			continue
		case utf8.RuneCountInString(in.Value) > maxCellValue:
			p.Add(path, "too_big", "a cell value must be at most %d characters", maxCellValue)
		case b.Columns[i].Type == switchboard.ColumnNumbers && in.Value != "":
			if _, err := strconv.ParseFloat(strings.TrimSpace(in.Value), 64); err != nil {
				p.Add(path, "invalid_type", "the %s column holds numbers", b.Columns[i].Title)
			}
		}
		out[b.Columns[i].Title] = strings.TrimSpace(in.Value)
	}
	return out
}

func ownField(c switchboard.BoardColumn) string {
	if c.Type == switchboard.ColumnDate {
		return "due_date"
	}
	return c.ID
}

// fingerprint is the dedupe fingerprint of an item's text and source.
func fingerprint(text string, src *switchboard.BoardSource) string {
	if src == nil {
		return boards.Fingerprint(text, "")
	}
	return boards.Fingerprint(text, src.ChatID)
}

// apply sets the given fields of d on an item mutation and returns the names of
// the fields that differ from it (all the given ones when it is nil).
func (d itemDraft) apply(m *ent.BoardItemMutation, it *ent.BoardItem) []string {
	cur := it
	if cur == nil {
		cur = &ent.BoardItem{}
	}
	var changed []string
	if d.text != nil && cur.Text != *d.text {
		m.SetText(*d.text)
		changed = append(changed, "text")
	}
	for _, o := range []struct {
		name, labelField, colorField string
		opt                          *switchboard.BoardOption
		cur                          switchboard.BoardOption
	}{
		{"status", boarditem.FieldStatusLabel, boarditem.FieldStatusColor, d.status, switchboard.BoardOption{Label: cur.StatusLabel, Bgcolor: cur.StatusColor}},
		{"priority", boarditem.FieldPriorityLabel, boarditem.FieldPriorityColor, d.priority, switchboard.BoardOption{Label: cur.PriorityLabel, Bgcolor: cur.PriorityColor}},
	} {
		if o.opt == nil || *o.opt == o.cur {
			continue
		}
		if o.opt.Label == "" {
			_, _ = m.ClearField(o.labelField), m.ClearField(o.colorField)
		} else {
			_, _ = m.SetField(o.labelField, o.opt.Label), m.SetField(o.colorField, o.opt.Bgcolor)
		}
		changed = append(changed, o.name)
	}
	if d.dueDate != nil && cur.DueDate != *d.dueDate {
		if *d.dueDate == "" {
			m.ClearDueDate()
		} else {
			m.SetDueDate(*d.dueDate)
		}
		changed = append(changed, "due_date")
	}
	if d.cells != nil {
		cells := maps.Clone(cur.Cells)
		if cells == nil {
			cells = map[string]string{}
		}
		for k, v := range d.cells {
			if v == "" {
				delete(cells, k)
			} else {
				cells[k] = v
			}
		}
		if !maps.Equal(cells, cur.Cells) {
			m.SetCells(cells)
			changed = append(changed, "cells")
		}
	}
	if d.source != nil && (cur.Source == nil || *cur.Source != *d.source) {
		m.SetSource(d.source)
		changed = append(changed, "source")
	}
	if d.confidence != nil && (cur.Confidence == nil || *cur.Confidence != *d.confidence) {
		m.SetConfidence(*d.confidence)
		changed = append(changed, "confidence")
	}
	return changed
}

// newItem creates the item of d on board b, stamping its AI metadata record.
func newItem(ctx context.Context, tx *ent.Tx, b *ent.Board, d itemDraft, via string, now time.Time) (*ent.BoardItem, error) {
	fp := fingerprint(*d.text, d.source)
	c := tx.BoardItem.Create().SetBoardID(b.ID).SetFingerprint(fp).SetLastSeenAt(now).SetCreatedAt(now).SetUpdatedAt(now).
		SetAiMeta(switchboard.BoardItemMeta{Fingerprint: fp, Source: d.source, Via: via, Sightings: 1})
	d.apply(c.Mutation(), nil)
	return c.Save(ctx)
}

// sight records that the fact of it was seen again with d: the given fields that
// differ are patched (merged richer), and last_seen_at moves to now. It returns the
// item and whether any field changed.
func sight(ctx context.Context, tx *ent.Tx, it *ent.BoardItem, d itemDraft, now time.Time) (*ent.BoardItem, bool, error) {
	d.text = nil // the same fact: the text it was first told with stays
	if d.source != nil && it.Source != nil {
		d.source = richer(*it.Source, *d.source)
	}
	u := tx.BoardItem.UpdateOne(it).SetLastSeenAt(now)
	changed := d.apply(u.Mutation(), it)
	meta := it.AiMeta
	meta.Sightings++
	if len(changed) > 0 {
		u.SetUpdatedAt(now)
		meta.History = append(meta.History, switchboard.BoardItemChange{At: now, Fields: changed, Note: "seen again"})
	}
	it, err := u.SetAiMeta(meta).Save(ctx)
	return it, len(changed) > 0, err
}

// richer is old with the non-empty fields of seen laid over it: a sighting that
// knows less about the source does not forget what was known.
func richer(old, seen switchboard.BoardSource) *switchboard.BoardSource {
	for _, f := range []struct{ dst, src *string }{{&old.ChatID, &seen.ChatID}, {&old.ChatName, &seen.ChatName},
		{&old.MessageKey, &seen.MessageKey}, {&old.Excerpt, &seen.Excerpt}} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if seen.ExtractedAt != 0 {
		old.ExtractedAt = seen.ExtractedAt
	}
	return &old
}

// checkNewItem validates the input of a new item; paths start with prefix.
func checkNewItem(p *switchboard.Problems, prefix string, b *ent.Board, in *model.BoardItemInput) itemDraft {
	if strings.TrimSpace(in.Text) == "" {
		p.Add(prefix+"text", "invalid_type", "text is required (1-%d characters)", maxItemText)
	}
	return checkItem(p, prefix, b, newItemFields(in))
}

// createItem is the use case behind createBoardItem.
func (r *Resolver) createItem(ctx context.Context, boardID string, in model.BoardItemInput) (*model.BoardItemPayload, error) {
	b, err := r.getBoard(ctx, boardID)
	if err != nil {
		return nil, err
	}
	var p switchboard.Problems
	d := checkNewItem(&p, "", b, &in)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	now := r.now()
	out := &model.BoardItemPayload{}
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		if in.AllowDuplicate == nil || !*in.AllowDuplicate {
			same, err := tx.BoardItem.Query().Where(live(b, now), boarditem.Fingerprint(fingerprint(*d.text, d.source))).
				Order(ent.Desc(boarditem.FieldLastSeenAt)).First(ctx)
			if err == nil {
				out.Item, _, err = sight(ctx, tx, same, d, now)
				out.Merged = true
				return err
			} else if !ent.IsNotFound(err) {
				return err
			}
		}
		out.Item, err = newItem(ctx, tx, b, d, viaCreate, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// upsertItems is the use case behind upsertBoardItems: every input is checked
// first, then all are merged in one transaction. An input whose fingerprint
// matches a live item (or one created earlier in the same call) is a sighting of
// it; a miss, or an input with allow_duplicate, is created.
func (r *Resolver) upsertItems(ctx context.Context, boardID string, items []*model.BoardItemInput, mode *string) (*model.BoardMergeReport, error) {
	b, err := r.getBoard(ctx, boardID)
	if err != nil {
		return nil, err
	}
	drafts, err := checkUpsert(b, items, mode)
	if err != nil {
		return nil, err
	}
	now := r.now()
	report := &model.BoardMergeReport{Created: []*ent.BoardItem{}, Updated: []*ent.BoardItem{}, Board: b}
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		return mergeItems(ctx, tx, b, items, drafts, now, report)
	})
	if err != nil {
		return nil, err
	}
	return report, nil
}

// checkUpsert checks upsertBoardItems' mode and every one of its items, and
// returns the items' drafts.
func checkUpsert(b *ent.Board, items []*model.BoardItemInput, mode *string) ([]itemDraft, error) {
	var p switchboard.Problems
	if mode != nil && *mode != "upsert" {
		p.Add("mode", "invalid_enum_value", "mode must be upsert")
	}
	if len(items) < 1 || len(items) > maxBulkItems {
		p.Add("items", "too_big", "items must hold 1-%d items", maxBulkItems)
	}
	drafts := make([]itemDraft, len(items))
	for i, in := range items {
		drafts[i] = checkNewItem(&p, "items."+strconv.Itoa(i)+".", b, in)
	}
	return drafts, p.Err(switchboard.EVALIDATION)
}

// mergeItems merges the drafts of items into b inside tx (see upsertItems),
// and lists in report what it created and updated, and how many it left
// unchanged.
func mergeItems(ctx context.Context, tx *ent.Tx, b *ent.Board, items []*model.BoardItemInput, drafts []itemDraft, now time.Time, report *model.BoardMergeReport) error {
	fps := make([]string, len(drafts))
	for i, d := range drafts {
		fps[i] = fingerprint(*d.text, d.source)
	}
	found, err := tx.BoardItem.Query().Where(live(b, now), boarditem.FingerprintIn(fps...)).
		Order(ent.Asc(boarditem.FieldLastSeenAt)).All(ctx)
	if err != nil {
		return err
	}
	byFP := map[string]*ent.BoardItem{}
	for _, it := range found {
		byFP[it.Fingerprint] = it // the most recently seen wins
	}
	slots := reportSlots{}
	for i, d := range drafts {
		same := byFP[fps[i]]
		if same == nil || (items[i].AllowDuplicate != nil && *items[i].AllowDuplicate) {
			it, err := newItem(ctx, tx, b, d, viaBulk, now)
			if err != nil {
				return err
			}
			byFP[fps[i]] = it
			slots.put(&report.Created, it)
			continue
		}
		it, changed, err := sight(ctx, tx, same, d, now)
		if err != nil {
			return err
		}
		byFP[fps[i]] = it
		if changed {
			slots.put(&report.Updated, it)
			continue
		}
		report.Unchanged++
		if _, listed := slots[it.ID]; listed {
			slots.put(nil, it) // refresh the snapshot already in the report
		}
	}
	return nil
}

// reportSlots says where each item of a merge report is, by id, so that an
// item met twice is listed once, as last seen.
type reportSlots map[string]reportSlot

// reportSlot is a place in one of a report's lists.
type reportSlot struct {
	list *[]*ent.BoardItem
	i    int
}

// put lists it in list, or, when it is listed already, replaces its snapshot
// where it is.
func (s reportSlots) put(list *[]*ent.BoardItem, it *ent.BoardItem) {
	if at, ok := s[it.ID]; ok {
		(*at.list)[at.i] = it
		return
	}
	*list = append(*list, it)
	s[it.ID] = reportSlot{list, len(*list) - 1}
}

// updateItem is the use case behind updateBoardItem.
func (r *Resolver) updateItem(ctx context.Context, boardID, itemID string, in model.BoardItemPatch) (*ent.BoardItem, error) {
	b, err := r.getBoard(ctx, boardID)
	if err != nil {
		return nil, err
	}
	var p switchboard.Problems
	d := checkItem(&p, "", b, itemFields{Text: in.Text, Status: in.Status, Priority: in.Priority, DueDate: in.DueDate,
		Cells: in.Cells, Source: in.Source, Confidence: in.Confidence})
	textLen(&p, "note", in.Note, 0, maxNote)
	if in.Text == nil && in.Status == nil && in.Priority == nil && in.DueDate == nil && in.Cells == nil &&
		in.Source == nil && in.Confidence == nil && in.Deleted == nil && in.Note == nil {
		p.Add("body", "too_small", "give at least one field to change")
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	now := r.now()
	var it *ent.BoardItem
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		it, err = tx.BoardItem.Query().Where(boarditem.ID(itemID), boarditem.BoardID(b.ID)).Only(ctx)
		if ent.IsNotFound(err) {
			return switchboard.Errorf(switchboard.ENOTFOUND, "No item %s on board %s.", quote(itemID), quote(boardID))
		} else if err != nil {
			return err
		}
		u := tx.BoardItem.UpdateOne(it).SetLastSeenAt(now)
		changed := d.apply(u.Mutation(), it)
		if d.text != nil || d.source != nil {
			text, src := it.Text, it.Source
			if d.text != nil {
				text = *d.text
			}
			if d.source != nil {
				src = d.source
			}
			u.SetFingerprint(fingerprint(text, src))
		}
		if in.Deleted != nil && *in.Deleted != (it.DeletedAt != nil) {
			if *in.Deleted {
				u.SetDeletedAt(now)
			} else {
				u.ClearDeletedAt()
			}
			changed = append(changed, "deleted")
		}
		meta := it.AiMeta
		if len(changed) > 0 || in.Note != nil {
			u.SetUpdatedAt(now)
			meta.History = append(meta.History, switchboard.BoardItemChange{At: now, Fields: changed, Note: strings.TrimSpace(deref(in.Note))})
		}
		it, err = u.SetAiMeta(meta).Save(ctx)
		return err
	})
	return it, err
}

// findSimilar is the use case behind findSimilarBoardItems: it ranks the board's
// live items against each candidate with boards.Index (trigram Jaccard).
func (r *Resolver) findSimilar(ctx context.Context, boardID string, candidates []*model.BoardCandidateInput) (*model.SimilarItems, error) {
	b, err := r.getBoard(ctx, boardID)
	if err != nil {
		return nil, err
	}
	var p switchboard.Problems
	if len(candidates) < 1 || len(candidates) > maxCandidates {
		p.Add("candidates", "too_big", "candidates must hold 1-%d texts", maxCandidates)
	}
	for i, c := range candidates {
		textLen(&p, "candidates."+strconv.Itoa(i)+".text", &c.Text, 1, maxItemText)
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	items, err := r.Client.BoardItem.Query().Where(live(b, r.now())).Order(ent.Asc(boarditem.FieldCreatedAt, boarditem.FieldID)).
		Select(boarditem.FieldID, boarditem.FieldText).All(ctx)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	index := boards.NewIndex(texts)
	out := &model.SimilarItems{Matches: []*model.SimilarItem{}, Misses: []int{}}
	for i, c := range candidates {
		hits := index.Rank(c.Text, boards.MinScore, maxSimilarPerText)
		if len(hits) == 0 {
			out.Misses = append(out.Misses, i)
		}
		for _, h := range hits {
			out.Matches = append(out.Matches, &model.SimilarItem{CandidateIndex: i, ItemID: items[h.Doc].ID, Text: items[h.Doc].Text, Score: h.Score})
		}
	}
	return out, nil
}

// labelOption is the option an item stores as label and color; nil when unset.
func labelOption(label, color string) *switchboard.BoardOption {
	if label == "" {
		return nil
	}
	return &switchboard.BoardOption{Label: label, Bgcolor: color}
}
