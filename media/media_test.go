package media

import "testing"

func TestDetectKind(t *testing.T) {
	tests := []struct{ contentType, name, want string }{
		{"image/png", "", "image"},
		{"", "photo.JPG", "image"},
		{"image/gif", "", "gif"},
		{"image/webp", "", "sticker"},
		{"video/mp4", "", "video"},
		{"audio/ogg; codecs=opus", "", "voice"},
		{"", "note.opus", "voice"},
		{"audio/mpeg", "", "audio"},
		{"", "song.mp3", "audio"},
		{"application/pdf", "invoice.pdf", "document"},
		{"", "", "document"},
	}
	for _, tt := range tests {
		if got := DetectKind(tt.contentType, tt.name); got != tt.want {
			t.Errorf("DetectKind(%q, %q) = %q, want %q", tt.contentType, tt.name, got, tt.want)
		}
	}
}

func TestDecodeBase64(t *testing.T) {
	tests := []struct {
		in, wantType, wantData string
		ok                     bool
	}{
		{"aGVsbG8=", "", "hello", true},
		{"aGVsbG8", "", "hello", true},
		{"data:image/png;base64,aGVsbG8=", "image/png", "hello", true},
		{"data:text/plain,hello", "", "", false},
		{"%%%", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		data, ct, err := DecodeBase64(tt.in)
		if (err == nil) != tt.ok || string(data) != tt.wantData || ct != tt.wantType {
			t.Errorf("DecodeBase64(%q) = %q, %q, %v", tt.in, data, ct, err)
		}
	}
}
