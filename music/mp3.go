package music

import (
	"io"

	shine "github.com/braheezy/shine-mp3/pkg/mp3"
)

// frameSamples is the samples of one MPEG-1 Layer III frame per channel.
const frameSamples = 1152

// EncodeMP3 writes pcm (mono, SampleRate, -1..1) to w as a 128 kb/s MP3.
//
// The encoder (shine-mp3 v0.1.0) is fed exactly one frame per Write: given more,
// it skips every other frame of mono input. It reads the frame through a pointer
// walk that runs one sample past the slice it is given, so the frame is copied
// into a buffer with spare capacity (which keeps -d=checkptr quiet as well).
func EncodeMP3(w io.Writer, pcm []float32) error {
	enc := shine.NewEncoder(SampleRate, 1)
	buf := make([]int16, frameSamples+16)
	for off := 0; off < len(pcm); off += frameSamples {
		frame := buf[:frameSamples]
		clear(frame)
		for i := 0; i < frameSamples && off+i < len(pcm); i++ {
			frame[i] = int16(max(-1, min(1, pcm[off+i])) * 32767)
		}
		if err := enc.Write(w, frame); err != nil {
			return err
		}
	}
	return nil
}
