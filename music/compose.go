package music

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"unicode"
)

// A section of the lyrics: its tag ("verse", "chorus", …) and, per line, the
// syllables of the line (each a vowel letter standing for its sound).
type section struct {
	kind  string
	lines [][]rune
}

// parseLyrics splits lyrics into sections at [Tag] lines. Lines before any tag
// form a verse; empty lines are skipped.
func parseLyrics(lyrics string) []section {
	var out []section
	cur := section{kind: "verse"}
	flush := func() {
		if len(cur.lines) > 0 {
			out = append(out, cur)
		}
	}
	for _, line := range strings.Split(lyrics, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			flush()
			tag := strings.ToLower(strings.TrimSpace(strings.Trim(line, "[]")))
			tag, _, _ = strings.Cut(tag, " ")
			cur = section{kind: tag}
			continue
		}
		if syl := syllables(line); len(syl) > 0 {
			cur.lines = append(cur.lines, syl)
		}
	}
	flush()
	return out
}

// syllables counts the syllables of a line by its vowel groups, returning each
// group's first vowel (which picks the sung vowel's sound).
func syllables(line string) []rune {
	var out []rune
	for _, word := range strings.FieldsFunc(strings.ToLower(line), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		n := len(out)
		inVowel := false
		runes := []rune(word)
		for i, r := range runes {
			v := strings.ContainsRune("aeiouyàáâäèéêëìíîïòóôöùúûü", r)
			if v && !inVowel && !(r == 'e' && i == len(runes)-1 && len(out) > n) { // silent final e
				out = append(out, fold(r))
			}
			inVowel = v
		}
		if len(out) == n { // a word without vowels still takes a beat
			out = append(out, 'a')
		}
	}
	return out
}

func fold(r rune) rune {
	switch {
	case strings.ContainsRune("aàáâä", r):
		return 'a'
	case strings.ContainsRune("eèéêë", r):
		return 'e'
	case strings.ContainsRune("iìíîïy", r):
		return 'i'
	case strings.ContainsRune("oòóôö", r):
		return 'o'
	}
	return 'u'
}

// style is what a song's style text and the sliders make of its sound.
type style struct {
	tempo       float64 // beats per minute
	scale       []int   // semitones of the scale degrees above the root
	root        int     // MIDI note of the key
	instruments map[string]bool
	drums       bool
	weirdness   float64
}

var (
	major  = []int{0, 2, 4, 5, 7, 9, 11}
	minor  = []int{0, 2, 3, 5, 7, 8, 10}
	dorian = []int{0, 2, 3, 5, 7, 9, 10}
	// phrygian is where a very weird song drifts.
	phrygian = []int{0, 1, 3, 5, 7, 8, 10}
)

// Tempo words of style texts, in beats per minute, and words that move the tempo.
var (
	styleTempos = []struct {
		word  string
		tempo float64
	}{
		{"ballad", 70}, {"slow", 72}, {"lo-fi", 78}, {"lofi", 78}, {"reggae", 80}, {"blues", 88},
		{"hip hop", 90}, {"hip-hop", 90}, {"rap", 92}, {"trap", 140}, {"jazz", 105}, {"funk", 108},
		{"pop", 112}, {"disco", 118}, {"house", 124}, {"dance", 124}, {"edm", 126}, {"rock", 128},
		{"techno", 130}, {"metal", 150}, {"punk", 172}, {"drum and bass", 172},
	}
	tempoMoves = map[string]float64{"upbeat": 12, "fast": 20, "energetic": 12, "chill": -10, "relaxed": -10, "calm": -12}
	minorWords = []string{"sad", "minor", "dark", "melanch", "lo-fi", "lofi", "blues", "metal", "moody", "emo", "gloomy"}
	// Instrument words, by the instrument they ask for.
	instrumentWords = map[string][]string{
		"piano":   {"piano", "keys", "ballad"},
		"guitar":  {"guitar", "acoustic", "folk", "country", "rock", "punk", "metal"},
		"synth":   {"synth", "electronic", "edm", "house", "techno", "dance", "disco", "80s", "trap"},
		"strings": {"strings", "orchestra", "orchestral", "cinematic", "violin", "cello"},
	}
	drumlessWords = []string{"ambient", "a cappella", "acapella", "drumless"}
)

// newStyle reads the style text, shaped by the sliders: styleInfluence is how far
// the tempo and the instruments follow the text rather than a plain piano song at
// 100 BPM; weirdness is the melody's freedom. seed picks the key.
func newStyle(req Request, seed uint64) style {
	text, neg := strings.ToLower(req.Style), strings.ToLower(req.NegativeStyle)
	infl := value(req.StyleInfluence, 0.5)
	s := style{scale: major, instruments: map[string]bool{}, drums: true, weirdness: value(req.Weirdness, 0.3)}
	var sum float64
	var n int
	for _, st := range styleTempos {
		if strings.Contains(text, st.word) && !strings.Contains(neg, st.word) {
			sum, n = sum+st.tempo, n+1
		}
	}
	tempo := 100.0
	if n > 0 {
		tempo = sum / float64(n)
	}
	for w, d := range tempoMoves {
		if strings.Contains(text, w) {
			tempo += d
		}
	}
	s.tempo = 100 + (tempo-100)*(0.3+0.7*infl)
	for _, w := range minorWords {
		if strings.Contains(text, w) {
			s.scale = minor
		}
	}
	if strings.Contains(text, "jazz") {
		s.scale = dorian
	}
	if s.weirdness > 0.8 {
		s.scale = phrygian
	}
	for inst, words := range instrumentWords {
		for _, w := range words {
			if strings.Contains(text, w) && infl > 0.15 {
				s.instruments[inst] = true
			}
		}
		if strings.Contains(neg, inst) {
			delete(s.instruments, inst)
		}
	}
	if len(s.instruments) == 0 {
		s.instruments["piano"] = true
	}
	for _, w := range drumlessWords {
		if strings.Contains(text, w) {
			s.drums = false
		}
	}
	if strings.Contains(neg, "drum") || strings.Contains(neg, "percussion") || strings.Contains(neg, "beat") {
		s.drums = false
	}
	s.root = 45 + int(seed%8) // A2 to E3: the bass octave
	return s
}

func value(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// A note of the score.
type note struct {
	start, dur float64 // seconds
	midi       float64
	vel        float64
	vowel      rune // sung notes only
}

// score is a song laid out in time.
type score struct {
	seconds float64
	beat    float64     // seconds per beat
	bars    []bar       // one per bar, in order
	voice   []note      // the sung melody (empty when instrumental)
	lead    []note      // an instrumental melody when there is no voice
	vocalLo int         // the vocal range, MIDI
	style   style       // what shaped it
	kinds   []string    // section kind of each bar
	chords  [][]float64 // chord of each bar, MIDI
}

type bar struct {
	start float64
	chord int // scale degree of the chord root
}

// Chord progressions (scale degrees of the chord roots) by section kind.
var progressions = map[string][][]int{
	"verse":  {{0, 5, 3, 4}, {0, 3, 5, 4}},
	"chorus": {{3, 4, 0, 5}, {0, 4, 5, 3}},
	"bridge": {{5, 3, 0, 4}, {3, 5, 4, 4}},
	"intro":  {{0, 3, 0, 4}, {0, 0, 3, 3}},
	"outro":  {{3, 4, 0, 0}, {0, 3, 4, 0}},
}

// compose lays the lyrics out as a score for variant: each line takes a bar (two
// when it has more than eight syllables) sung in eighths on the chords of its
// section. The song repeats until it lasts minSec, and stops at maxSec. The
// reference's tempo pulls the song's tempo by audioInfluence.
func compose(req Request, variant int, ref *reference, minSec, maxSec float64) *score {
	seed := seedOf(req, variant)
	c := &composer{rng: rand.New(rand.NewPCG(seed, uint64(variant)+1)), deg: 2, sung: !req.Instrumental}
	sc := newScore(req, variant, ref, seed)
	c.sc = sc
	secs := sectionsOf(req)
	barLen := 4 * sc.beat
	t := 0.0
	for pass := 0; t < minSec; pass++ {
		for _, sec := range secs {
			prog := progressionOf(sec.kind, variant)
			lift := 0
			if sec.kind == "chorus" {
				lift = 2
			}
			for li, syl := range sec.lines {
				bars := 1
				if len(syl) > 8 {
					bars = 2
				}
				if t+float64(bars)*barLen > maxSec {
					sc.seconds = t
					return sc
				}
				c.line(t, sec.kind, prog, li, bars, syl, lift)
				t += float64(bars) * barLen
			}
		}
		if pass > 64 {
			break
		}
	}
	sc.seconds = t
	return sc
}

// newScore is the empty score of variant: its style, its tempo (pulled toward
// the reference's by audioInfluence, a little faster for each variant) and the
// floor of its vocal range.
func newScore(req Request, variant int, ref *reference, seed uint64) *score {
	st := newStyle(req, seed)
	if ref != nil {
		a := value(req.AudioInfluence, 0.5)
		st.tempo = st.tempo + (ref.tempo-st.tempo)*a
	}
	st.tempo = math.Max(50, math.Min(190, st.tempo*(1+0.04*float64(variant))))
	sc := &score{beat: 60 / st.tempo, style: st}
	switch req.VocalGender {
	case VocalMale:
		sc.vocalLo = 50 // D3
	case VocalFemale:
		sc.vocalLo = 62 // D4
	default:
		sc.vocalLo = []int{62, 50}[(int(seed>>8)+variant)%2]
	}
	return sc
}

// sectionsOf are the sections of the lyrics, or for an instrumental (or no
// lyrics) the shape of a song with a placeholder line per bar.
func sectionsOf(req Request) []section {
	secs := parseLyrics(req.Lyrics)
	if req.Instrumental || len(secs) == 0 {
		line := []rune("aaaaaa")
		secs = []section{{"intro", [][]rune{line, line}}, {"verse", [][]rune{line, line, line, line}},
			{"chorus", [][]rune{line, line, line, line}}, {"outro", [][]rune{line, line}}}
	}
	return secs
}

// composer lays lines out on a score, walking the melody with rng.
type composer struct {
	sc   *score
	rng  *rand.Rand
	deg  int  // melody position, scale degrees above the vocal floor's tonic
	sung bool // the notes are the voice's; else an octave up, the lead's
}

// line lays out line li (its syllables syl) of a section of kind on the chord
// progression prog, from t over bars bars: the bars with their chords, and a note
// per syllable, in eighths unless the line needs shorter ones, the last held to
// the end. lift raises the melody (a chorus).
func (c *composer) line(t float64, kind string, prog []int, li, bars int, syl []rune, lift int) {
	sc, st := c.sc, c.sc.style
	barLen := 4 * sc.beat
	for b := 0; b < bars; b++ {
		chord := prog[(li*bars+b)%len(prog)]
		sc.bars = append(sc.bars, bar{start: t + float64(b)*barLen, chord: chord})
		sc.kinds = append(sc.kinds, kind)
	}
	slot := sc.beat / 2
	if len(syl) > 8*bars {
		slot = float64(bars) * barLen / float64(len(syl))
	}
	for i, v := range syl {
		chord := prog[(li*bars+int(float64(i)*slot/barLen))%len(prog)]
		c.deg = nextDegree(c.rng, c.deg, chord, lift, i%2 == 0, st.weirdness)
		d := slot * 0.9
		if i == len(syl)-1 {
			d = t + float64(bars)*barLen - (t + float64(i)*slot) - slot*0.2
		}
		n := note{start: t + float64(i)*slot, dur: d, midi: float64(pitch(st, sc.vocalLo, c.deg+lift)), vel: 0.8, vowel: v}
		if st.weirdness > 0.5 && c.rng.Float64() < (st.weirdness-0.5)*0.5 {
			n.midi += float64(c.rng.IntN(3) - 1) // a chromatic bend
		}
		if c.sung {
			sc.voice = append(sc.voice, n)
		} else {
			n.midi += 12
			sc.lead = append(sc.lead, n)
		}
	}
}

func progressionOf(kind string, variant int) []int {
	p, ok := progressions[kind]
	if !ok {
		p = progressions["verse"]
	}
	return p[variant%len(p)]
}

// nextDegree moves the melody a step (a leap when weird), landing on a tone of the
// chord on strong beats unless weirdness says otherwise.
func nextDegree(rng *rand.Rand, deg, chord, lift int, strong bool, weird float64) int {
	steps := []int{-1, 0, 1, 1, -2, 2}
	d := deg + steps[rng.IntN(len(steps))]
	if rng.Float64() < weird*0.6 {
		d += rng.IntN(7) - 3
	}
	if strong && rng.Float64() > weird*0.5 {
		best := chord
		for _, tone := range []int{chord, chord + 2, chord + 4, chord + 7, chord + 9} {
			if abs(tone-d) < abs(best-d) {
				best = tone
			}
		}
		d = best
	}
	return max(0, min(9-lift, d))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// pitch is the MIDI note of scale degree deg above the vocal floor, in the key.
func pitch(st style, floor, deg int) int {
	tonic := st.root
	for tonic < floor {
		tonic += 12
	}
	oct, i := deg/len(st.scale), deg%len(st.scale)
	return tonic + 12*oct + st.scale[i]
}

// chordNotes is the triad on scale degree deg, around MIDI note around.
func chordNotes(st style, deg, around int) []float64 {
	var out []float64
	for _, k := range []int{0, 2, 4} {
		d := deg + k
		m := st.root + 12*(d/len(st.scale)) + st.scale[d%len(st.scale)]
		for m < around {
			m += 12
		}
		out = append(out, float64(m))
	}
	return out
}

// seedOf derives the randomness of a variant from the request: the same request
// always renders the same song.
func seedOf(req Request, variant int) uint64 {
	h := fnv.New64a()
	for _, s := range []string{req.Lyrics, req.Style, req.NegativeStyle, req.VocalGender, req.Model} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write([]byte{byte(variant)})
	return h.Sum64()
}
