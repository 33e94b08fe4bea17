package music

import (
	"math"
	"math/rand/v2"
)

// SampleRate is the rate of rendered audio, in samples per second (mono).
const SampleRate = 44100

func hz(midi float64) float64 { return 440 * math.Pow(2, (midi-69)/12) }

// render synthesizes sc: bass, chords on the style's instruments, drums, and the
// voice (or an instrumental lead), mixed to the loudness target (an RMS level).
func render(sc *score, seed uint64, loudness float64) []float32 {
	out := make([]float32, int(sc.seconds*SampleRate)+SampleRate/2)
	rng := rand.New(rand.NewPCG(seed, 7))
	st := sc.style
	barLen := 4 * sc.beat
	for i, b := range sc.bars {
		chord := chordNotes(st, b.chord, 55)
		// Bass: the chord's root on each beat, an octave down on the off-beats of a chorus.
		for k := 0; k < 4; k++ {
			m := chord[0] - 12
			for m > 52 {
				m -= 12
			}
			if sc.kinds[i] == "chorus" && k%2 == 1 {
				m += 12
			}
			addTone(out, b.start+float64(k)*sc.beat, sc.beat*0.9, hz(m), 0.35, bassTimbre)
		}
		for inst := range st.instruments {
			switch inst {
			case "piano":
				for _, m := range chord {
					addTone(out, b.start, barLen*0.5, hz(m), 0.12, pianoTimbre)
					addTone(out, b.start+barLen/2, barLen*0.5, hz(m), 0.09, pianoTimbre)
				}
			case "guitar":
				for k := 0; k < 4; k++ { // a strum per beat
					for j, m := range chord {
						pluck(out, b.start+float64(k)*sc.beat+float64(j)*0.012, sc.beat, hz(m), 0.14, rng)
					}
				}
			case "synth":
				for _, m := range chord {
					addTone(out, b.start, barLen, hz(m), 0.06, sawTimbre)
				}
			case "strings":
				for _, m := range chord {
					addTone(out, b.start, barLen, hz(m+12), 0.07, stringTimbre)
				}
			}
		}
		if st.drums {
			for k := 0; k < 8; k++ {
				at := b.start + float64(k)*sc.beat/2
				if k == 0 || k == 4 || (sc.kinds[i] == "chorus" && k == 6) {
					kick(out, at)
				}
				if k == 2 || k == 6 {
					snare(out, at, rng)
				}
				hat(out, at, rng, 0.05+0.03*float64(k%2))
			}
		}
	}
	for _, n := range sc.voice {
		sing(out, n)
	}
	for _, n := range sc.lead {
		addTone(out, n.start, n.dur, hz(n.midi), 0.2, leadTimbre)
	}
	return master(out, loudness)
}

// A timbre gives the amplitude of the harmonics of a tone at time t into it, of length d.
type timbre func(h int, t, d float64) float64

func bassTimbre(h int, t, d float64) float64 {
	return []float64{1, 0.5, 0.2, 0, 0, 0}[min(h-1, 5)] * envelope(t, d, 0.01, 0.1)
}

func pianoTimbre(h int, t, d float64) float64 {
	return math.Exp(-t*(2+float64(h))) / float64(h*h) * envelope(t, d, 0.005, 0.05)
}

func sawTimbre(h int, t, d float64) float64 {
	if h > 8 {
		return 0
	}
	return 1 / float64(h) * envelope(t, d, 0.05, 0.2)
}

func stringTimbre(h int, t, d float64) float64 {
	if h > 6 {
		return 0
	}
	return 1 / float64(h) * envelope(t, d, 0.3, 0.3)
}

func leadTimbre(h int, t, d float64) float64 {
	if h > 5 {
		return 0
	}
	return math.Pow(0.5, float64(h-1)) * envelope(t, d, 0.02, 0.08)
}

// envelope rises over attack, holds, and falls over release at the end of d.
func envelope(t, d, attack, release float64) float64 {
	switch {
	case t < attack:
		return t / attack
	case t > d:
		return 0
	case t > d-release:
		return (d - t) / release
	}
	return 1
}

// addTone adds a tone of frequency f from start for dur seconds.
func addTone(out []float32, start, dur, f, gain float64, tb timbre) {
	i0 := int(start * SampleRate)
	n := int(dur * SampleRate)
	harmonics := max(1, min(12, int(8000/f)))
	for i := 0; i < n && i0+i < len(out); i++ {
		t := float64(i) / SampleRate
		var v float64
		for h := 1; h <= harmonics; h++ {
			if a := tb(h, t, dur); a != 0 {
				v += a * math.Sin(2*math.Pi*f*float64(h)*t)
			}
		}
		out[i0+i] += float32(gain * v)
	}
}

// pluck adds a plucked string (Karplus-Strong).
func pluck(out []float32, start, dur, f, gain float64, rng *rand.Rand) {
	period := max(2, int(SampleRate/f))
	buf := make([]float64, period)
	for i := range buf {
		buf[i] = rng.Float64()*2 - 1
	}
	i0 := int(start * SampleRate)
	for i := 0; i < int(dur*SampleRate) && i0+i < len(out); i++ {
		j := i % period
		v := buf[j]
		buf[j] = 0.996 * 0.5 * (buf[j] + buf[(j+1)%period])
		out[i0+i] += float32(gain * v)
	}
}

func kick(out []float32, start float64) {
	i0 := int(start * SampleRate)
	phase := 0.0
	for i := 0; i < SampleRate/4 && i0+i < len(out); i++ {
		t := float64(i) / SampleRate
		phase += 2 * math.Pi * (50 + 100*math.Exp(-t*30)) / SampleRate
		out[i0+i] += float32(0.6 * math.Sin(phase) * math.Exp(-t*12))
	}
}

func snare(out []float32, start float64, rng *rand.Rand) {
	i0 := int(start * SampleRate)
	for i := 0; i < SampleRate/5 && i0+i < len(out); i++ {
		t := float64(i) / SampleRate
		v := 0.25*(rng.Float64()*2-1)*math.Exp(-t*20) + 0.15*math.Sin(2*math.Pi*180*t)*math.Exp(-t*25)
		out[i0+i] += float32(v)
	}
}

func hat(out []float32, start float64, rng *rand.Rand, gain float64) {
	i0 := int(start * SampleRate)
	prev := 0.0
	for i := 0; i < SampleRate/20 && i0+i < len(out); i++ {
		t := float64(i) / SampleRate
		x := rng.Float64()*2 - 1
		v := x - prev // a crude high-pass
		prev = x
		out[i0+i] += float32(gain * v * math.Exp(-t*60))
	}
}

// Formants (F1, F2, F3 in Hz) of the sung vowels.
var formants = map[rune][3]float64{
	'a': {800, 1200, 2500}, 'e': {500, 1900, 2500}, 'i': {300, 2300, 3000},
	'o': {500, 900, 2400}, 'u': {350, 800, 2300},
}

// sing adds a sung syllable: a harmonic voice whose partials are shaped by the
// vowel's formants, with a gentle vibrato.
func sing(out []float32, n note) {
	f0 := hz(n.midi)
	fm := formants[n.vowel]
	harmonics := max(1, int(4000/f0))
	amps := make([]float64, harmonics+1)
	for h := 1; h <= harmonics; h++ {
		fh := f0 * float64(h)
		for k, F := range fm {
			bw := 80.0 + 40*float64(k)
			amps[h] += math.Exp(-(fh-F)*(fh-F)/(2*bw*bw)) / float64(k+1)
		}
		amps[h] += 0.05 / float64(h)
	}
	i0 := int(n.start * SampleRate)
	phase := 0.0
	for i := 0; i < int(n.dur*SampleRate) && i0+i < len(out); i++ {
		t := float64(i) / SampleRate
		vib := 1 + 0.006*math.Sin(2*math.Pi*5.5*t)*math.Min(1, t*3)
		phase += 2 * math.Pi * f0 * vib / SampleRate
		var v float64
		for h := 1; h <= harmonics; h++ {
			v += amps[h] * math.Sin(float64(h)*phase)
		}
		out[i0+i] += float32(0.3 * n.vel * v * envelope(t, n.dur, 0.03, 0.06))
	}
}

// master scales out to the loudness (RMS) target and soft-clips it.
func master(out []float32, loudness float64) []float32 {
	var sum float64
	for _, v := range out {
		sum += float64(v) * float64(v)
	}
	rms := math.Sqrt(sum / float64(max(1, len(out))))
	g := 1.0
	if rms > 0 {
		g = loudness / rms
	}
	for i, v := range out {
		out[i] = float32(math.Tanh(float64(v) * g))
	}
	return out
}
