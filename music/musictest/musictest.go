// Package musictest holds helpers for tests of music: decoding the MP3s a
// provider made and writing WAV recordings to upload.
package musictest

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"

	gomp3 "github.com/hajimehoshi/go-mp3"
)

// Heard is what a decoder hears in an MP3.
type Heard struct {
	// Seconds is the decoded duration.
	Seconds float64
	// RMS is the loudness of the left channel, 0–1; silence is 0.
	RMS float64
}

// DecodeMP3 decodes data with go-mp3 and measures it.
func DecodeMP3(data []byte) (Heard, error) {
	d, err := gomp3.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return Heard{}, err
	}
	raw, err := io.ReadAll(d)
	if err != nil {
		return Heard{}, err
	}
	var sum float64
	n := len(raw) / 4 // 16-bit stereo frames
	for i := 0; i < n; i++ {
		v := float64(int16(binary.LittleEndian.Uint16(raw[4*i:])))
		sum += v * v
	}
	return Heard{Seconds: float64(n) / float64(d.SampleRate()), RMS: math.Sqrt(sum/float64(max(1, n))) / 32768}, nil
}

// WAV encodes mono samples (-1..1) at rate as a 16-bit PCM WAV file.
func WAV(pcm []float64, rate int) []byte {
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*len(pcm)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1)) // PCM
	le(uint16(1)) // mono
	le(uint32(rate))
	le(uint32(rate * 2))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(2 * len(pcm)))
	for _, v := range pcm {
		le(int16(v * 32767))
	}
	return b.Bytes()
}

// ClickTrack is seconds of clicks at bpm, at rate: a reference with a clear tempo.
func ClickTrack(bpm float64, seconds, rate int) []float64 {
	pcm := make([]float64, rate*seconds)
	for i := range pcm {
		if math.Mod(float64(i)/float64(rate), 60/bpm) < 0.03 {
			pcm[i] = 0.3 * math.Sin(float64(i)*0.3)
		}
	}
	return pcm
}
