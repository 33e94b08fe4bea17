package storage

import entsql "entgo.io/ent/dialect/sql"

// FilterOnly joins predicates with AND as a filter the database checks on rows
// it found some other way, never as a way to find them: it writes them as
// (...) IS TRUE, which selects the same rows but which no index, partial index
// predicate included, can answer. Use it beside a list of primary keys (a claim of
// the ids it just read: id IN (...) AND status = 'pending'), so that the primary
// key is the only way in whatever the table's statistics say.
//
// Without it PostgreSQL planned such claims, on queue tables with no statistics
// (autovacuum off, or a table that filled up since its last ANALYZE), through the
// partial index of pending rows, which it estimated at a few rows: it read every
// pending row and tested each against the ids. Measured with 38,000 events
// pending: 446 ms a claim of 500 inbox events, 1.7 ms by the primary key; a
// dispatch claim of 256 messages among 50,000 pending took 29 ms, 4 ms by the
// primary key.
func FilterOnly[P ~func(*entsql.Selector)](predicates ...P) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		s.CollectPredicates()
		for _, p := range predicates {
			p(s)
		}
		collected := s.CollectedPredicates()
		s.UncollectedPredicates()
		if len(collected) == 0 {
			return
		}
		s.Where(entsql.P().Append(func(b *entsql.Builder) {
			b.Wrap(func(b *entsql.Builder) { b.Join(entsql.And(collected...)) })
			b.WriteString(" IS TRUE")
		}))
	}
}
