package music

import (
	"bytes"
	"slices"
)

// Audio formats a reference recording may have.
const (
	FormatMP3  = "mp3"
	FormatWAV  = "wav"
	FormatOGG  = "ogg"
	FormatFLAC = "flac"
	FormatM4A  = "m4a"
)

// SniffLen is how many leading bytes Sniff needs.
const SniffLen = 12

// m4aBrands are the major brands of an MP4 container that holds audio.
var m4aBrands = []string{"M4A ", "M4B ", "M4P ", "mp41", "mp42", "isom", "iso2", "dash", "3gp4", "3gp5", "3gp6"}

// Sniff recognizes an audio format by its magic bytes (the first SniffLen bytes
// of a file): MP3 (an ID3 tag or an MPEG audio frame), WAV, OGG, FLAC or M4A.
func Sniff(head []byte) (string, bool) {
	switch {
	case bytes.HasPrefix(head, []byte("ID3")):
		return FormatMP3, true
	case len(head) >= 2 && head[0] == 0xFF && head[1]&0xE0 == 0xE0 && head[1]&0x06 != 0:
		return FormatMP3, true // frame sync, layer bits set (ADTS AAC has them clear)
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WAVE":
		return FormatWAV, true
	case bytes.HasPrefix(head, []byte("OggS")):
		return FormatOGG, true
	case bytes.HasPrefix(head, []byte("fLaC")):
		return FormatFLAC, true
	case len(head) >= 12 && string(head[4:8]) == "ftyp" && slices.Contains(m4aBrands, string(head[8:12])):
		return FormatM4A, true
	}
	return "", false
}

// ContentType is the media type of an audio format.
func ContentType(format string) string {
	switch format {
	case FormatMP3:
		return "audio/mpeg"
	case FormatWAV:
		return "audio/wav"
	case FormatOGG:
		return "audio/ogg"
	case FormatFLAC:
		return "audio/flac"
	case FormatM4A:
		return "audio/mp4"
	}
	return "application/octet-stream"
}
