package music

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"

	gomp3 "github.com/hajimehoshi/go-mp3"
)

// reference is what a song takes from a reference recording.
type reference struct {
	tempo float64 // beats per minute
	rms   float64 // loudness, 0–1
}

// analyzeSeconds is how much of a reference recording is listened to.
const analyzeSeconds = 60

// analyze listens to the recording at path: its tempo and loudness. It decodes
// WAV (PCM) and MP3; for other formats it returns nil, and the song follows the
// style alone.
func analyze(path string) (*reference, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(SniffLen)
	format, _ := Sniff(head)
	var pcm []float64
	var rate int
	switch format {
	case FormatWAV:
		pcm, rate, err = readWAV(br)
	case FormatMP3:
		pcm, rate, err = readMP3(br)
	default:
		return nil, nil
	}
	if err != nil || len(pcm) < rate {
		return nil, err // too short to have a tempo: follow the style
	}
	var sum float64
	for _, v := range pcm {
		sum += v * v
	}
	return &reference{tempo: tempoOf(pcm, rate), rms: math.Sqrt(sum / float64(len(pcm)))}, nil
}

// readWAV reads the PCM samples (8, 16, 24 or 32-bit integers) of a WAV file,
// mixed down to mono.
func readWAV(r io.Reader) ([]float64, int, error) {
	var riff [12]byte
	if _, err := io.ReadFull(r, riff[:]); err != nil {
		return nil, 0, err
	}
	var channels, bits, rate int
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil, 0, err
		}
		size := int64(binary.LittleEndian.Uint32(hdr[4:]))
		switch string(hdr[:4]) {
		case "fmt ":
			fmtChunk := make([]byte, min(size, 64))
			if _, err := io.ReadFull(r, fmtChunk); err != nil || len(fmtChunk) < 16 {
				return nil, 0, errors.New("music: bad WAV fmt chunk")
			}
			if _, err := io.CopyN(io.Discard, r, size-int64(len(fmtChunk))+size%2); err != nil {
				return nil, 0, err
			}
			channels = int(binary.LittleEndian.Uint16(fmtChunk[2:]))
			rate = int(binary.LittleEndian.Uint32(fmtChunk[4:]))
			bits = int(binary.LittleEndian.Uint16(fmtChunk[14:]))
		case "data":
			if channels < 1 || rate < 1000 || bits%8 != 0 || bits < 8 || bits > 32 {
				return nil, 0, errors.New("music: unsupported WAV encoding")
			}
			width := bits / 8
			frame := make([]byte, width*channels)
			limit := min(size/int64(len(frame)), int64(rate*analyzeSeconds))
			pcm := make([]float64, 0, limit)
			br := bufio.NewReader(io.LimitReader(r, size))
			for int64(len(pcm)) < limit {
				if _, err := io.ReadFull(br, frame); err != nil {
					break
				}
				var v float64
				for c := 0; c < channels; c++ {
					v += sample(frame[c*width:(c+1)*width]) / float64(channels)
				}
				pcm = append(pcm, v)
			}
			return pcm, rate, nil
		default:
			if _, err := io.CopyN(io.Discard, r, size+size%2); err != nil {
				return nil, 0, err
			}
		}
	}
}

// sample decodes one little-endian PCM sample to -1..1 (8-bit samples are unsigned).
func sample(b []byte) float64 {
	if len(b) == 1 {
		return (float64(b[0]) - 128) / 128
	}
	var v int32
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | int32(b[i])
	}
	shift := 32 - 8*len(b)
	v = v << shift >> shift // sign-extend
	return float64(v) / float64(int64(1)<<(8*len(b)-1))
}

// readMP3 decodes up to analyzeSeconds of an MP3, mixed down to mono.
func readMP3(r io.Reader) ([]float64, int, error) {
	d, err := gomp3.NewDecoder(r)
	if err != nil {
		return nil, 0, err
	}
	rate := d.SampleRate()
	pcm := make([]float64, 0, rate*analyzeSeconds)
	buf := make([]byte, 4096)
	for len(pcm) < rate*analyzeSeconds {
		n, err := d.Read(buf)
		for i := 0; i+3 < n; i += 4 { // 16-bit stereo
			l, r := int16(binary.LittleEndian.Uint16(buf[i:])), int16(binary.LittleEndian.Uint16(buf[i+2:]))
			pcm = append(pcm, (float64(l)+float64(r))/65536)
		}
		if err != nil {
			break
		}
	}
	return pcm, rate, nil
}

// tempoOf estimates the tempo of pcm: the autocorrelation of its onset strength
// (the rise of the energy per 10 ms hop), strongest between 60 and 180 BPM.
func tempoOf(pcm []float64, rate int) float64 {
	hop := rate / 100
	var env []float64
	prev := 0.0
	for i := 0; i+hop <= len(pcm); i += hop {
		var e float64
		for _, v := range pcm[i : i+hop] {
			e += v * v
		}
		e = math.Log1p(1000 * e / float64(hop))
		env = append(env, math.Max(0, e-prev))
		prev = e
	}
	best, bestLag := -1.0, 50
	for lag := 100 * 60 / 180; lag <= 100*60/60 && lag < len(env); lag++ {
		var c float64
		for i := lag; i < len(env); i++ {
			c += env[i] * env[i-lag]
		}
		c /= float64(len(env) - lag)
		if c > best {
			best, bestLag = c, lag
		}
	}
	return 6000 / float64(bestLag)
}
