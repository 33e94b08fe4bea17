package boards

import (
	"math"
	"sort"
	"strings"
)

// Similarity, the method: every text is normalized (Normalize) and cut into the
// set of its character trigrams, each word padded the way PostgreSQL's pg_trgm
// pads it ("  c", " ca", "cat", "at " for "cat"). The score of two texts is the
// Jaccard index of their sets, |A ∩ B| / |A ∪ B|: 1 for the same normalized text, 0
// for texts that share no trigram. Trigrams make the score forgiving of typos,
// plurals and word order, which suits short facts ("Call Maria re invoice" and
// "call maria about the invoices" score about 0.6), and need no corpus statistics
// or external service. An inverted index from trigram to texts counts the shared
// trigrams of a query with every text at once, so ranking a query costs the length
// of the postings it touches, not the size of the board.

// MinScore is the score from which find-similar reports a match.
const MinScore = 0.4

// Hit is one ranked text: its position in the indexed list and its score.
type Hit struct {
	Doc   int
	Score float64
}

// Index ranks a fixed list of texts by their similarity to a query.
type Index struct {
	sizes    []int
	postings map[string][]int
}

// NewIndex indexes texts.
func NewIndex(texts []string) *Index {
	x := &Index{sizes: make([]int, len(texts)), postings: map[string][]int{}}
	for i, t := range texts {
		grams := trigrams(t)
		x.sizes[i] = len(grams)
		for g := range grams {
			x.postings[g] = append(x.postings[g], i)
		}
	}
	return x
}

// Rank returns the texts whose score against text is at least min, best first
// (ties in index order), at most limit of them. Scores are rounded to 3 decimals.
func (x *Index) Rank(text string, min float64, limit int) []Hit {
	grams := trigrams(text)
	shared := map[int]int{}
	for g := range grams {
		for _, doc := range x.postings[g] {
			shared[doc]++
		}
	}
	var hits []Hit
	for doc, n := range shared {
		score := float64(n) / float64(len(grams)+x.sizes[doc]-n)
		if score >= min {
			hits = append(hits, Hit{Doc: doc, Score: math.Round(score*1000) / 1000})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc < hits[j].Doc
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// Similarity is the score of two texts.
func Similarity(a, b string) float64 {
	if hits := NewIndex([]string{b}).Rank(a, 0, 1); len(hits) > 0 {
		return hits[0].Score
	}
	return 0
}

// trigrams is the set of padded character trigrams of the normalized text.
func trigrams(text string) map[string]struct{} {
	out := map[string]struct{}{}
	for _, w := range strings.Fields(Normalize(text)) {
		r := []rune("  " + w + " ")
		for i := 0; i+3 <= len(r); i++ {
			out[string(r[i:i+3])] = struct{}{}
		}
	}
	return out
}
