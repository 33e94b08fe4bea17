package music

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
)

// coverSize is the width and height of a cover, in pixels.
const coverSize = 512

// cover draws the cover art of a song as a PNG: a gradient in colors taken from
// the seed, with rings for the sections and bars for the melody's pitches.
func cover(sc *score, seed uint64) []byte {
	img := image.NewRGBA(image.Rect(0, 0, coverSize, coverSize))
	h1 := float64(seed%360) / 360
	h2 := math.Mod(h1+0.25+float64(seed>>20%100)/400, 1)
	c1, c2 := hsv(h1, 0.6, 0.9), hsv(h2, 0.7, 0.35)
	for y := 0; y < coverSize; y++ {
		for x := 0; x < coverSize; x++ {
			t := float64(x+y) / (2 * coverSize)
			img.Set(x, y, mix(c1, c2, t))
		}
	}
	// Rings: one per bar group, radius by tempo.
	cx, cy := coverSize/2, coverSize/2
	for k := 0; k < len(sc.bars)/4+1 && k < 12; k++ {
		r := 40 + float64(k)*18*sc.style.tempo/100
		ring := hsv(math.Mod(h1+float64(k)*0.05, 1), 0.3, 1)
		for a := 0.0; a < 2*math.Pi; a += 1 / r {
			x, y := cx+int(r*math.Cos(a)), cy+int(r*math.Sin(a))
			if x >= 0 && y >= 0 && x < coverSize && y < coverSize {
				img.Set(x, y, ring)
			}
		}
	}
	// Bars: the melody's pitches along the bottom.
	notes := sc.voice
	if len(notes) == 0 {
		notes = sc.lead
	}
	for i, n := range notes {
		if i >= coverSize/4 {
			break
		}
		hgt := int((n.midi - 40) * 3)
		for y := coverSize - 1; y > coverSize-1-hgt && y >= 0; y-- {
			for x := i * 4; x < i*4+3; x++ {
				img.Set(x, y, color.RGBA{255, 255, 255, 160})
			}
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // writing to memory cannot fail
	return b.Bytes()
}

func mix(a, b color.RGBA, t float64) color.RGBA {
	l := func(x, y uint8) uint8 { return uint8(float64(x)*(1-t) + float64(y)*t) }
	return color.RGBA{l(a.R, b.R), l(a.G, b.G), l(a.B, b.B), 255}
}

func hsv(h, s, v float64) color.RGBA {
	i := math.Floor(h * 6)
	f := h*6 - i
	p, q, t := v*(1-s), v*(1-f*s), v*(1-(1-f)*s)
	var r, g, b float64
	switch int(i) % 6 {
	case 0:
		r, g, b = v, t, p
	case 1:
		r, g, b = q, v, p
	case 2:
		r, g, b = p, v, t
	case 3:
		r, g, b = p, q, v
	case 4:
		r, g, b = t, p, v
	default:
		r, g, b = v, p, q
	}
	return color.RGBA{uint8(r * 255), uint8(g * 255), uint8(b * 255), 255}
}
