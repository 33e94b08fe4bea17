package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/engine"
)

// FuzzDecodeEvent: whatever an engine puts in an events frame's slot, decoding
// it never panics; it is either refused as an invalid event, or an event that
// passes engine.Event.Validate and whose stored payload is valid UTF-8 without
// NUL (which PostgreSQL refuses). `go test -fuzz FuzzDecodeEvent ./engine/remote`
// explores further than the seeds.
func FuzzDecodeEvent(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a","type":"ack","key":{"fromMe":true,"remote":"1@c.us","id":"3EB0"},"ack":3}`,
		`{"id":"m","type":"message","message":{"key":{"remote":"1@c.us","id":"X"},"from":"1@c.us","type":"text","text":"hi"}}`,
		`{"type":"message","message":{"key":{"remote":"1@c.us","id":"X"},"type":""}}`,
		`{"type":"group","group":{"groupId":"1-2@g.us","action":"added","participants":["1@c.us"]}}`,
		`{"type":"chat","chat":{"id":"1@c.us","kind":"contact","unreadCount":2}}`,
		`{"type":"history","history":{"chats":[{"id":"1@c.us"}],"messages":[{"key":{"remote":"1@c.us","id":"H"},"text":"\u0000"}]}}`,
		`{"type":"pin","key":{"remote":"1@c.us","id":"P"},"pinned":1000}`,
		`{"type":"message","message":{"key":{"remote":"1@c.us","id":"I"},"type":"media","media":{"kind":"image","mimeType":"image/jpeg","size":12,"sha256":"` + strings.Repeat("0", 64) + `","caption":"c","width":2,"height":3}}}`,
		`{"type":"message","message":{"key":{"remote":"1@c.us","id":"L"},"type":"location","location":{"latitude":91,"longitude":0}}}`,
		`{"type":"message","message":{"key":{"remote":"1@c.us","id":"V"},"type":"vcard","vCards":[{"displayName":"A","vcard":""}]}}`,
		`{"type":"message","message":{"key":{"remote":"1@c.us","id":"U"},"type":"unknown","rawType":"eventMessage"}}`,
		`{"type":"message","message":{"key":{"remote":"1@c.us","id":"M"},"type":"media","media":{"kind":"voice","seconds":-1}}}`,
		"{\"type\":\"ack\",\"key\":{\"remote\":\"\xc0\xaf\",\"id\":\"A\"}}",
		`{"type":"connected"}`, `[]`, `null`, `"x"`, `{"type":5}`, `{"at":"yesterday"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := decodeEvent(raw)
		if err != nil {
			if !errors.Is(err, engine.ErrInvalidEvent) {
				t.Fatalf("refused without ErrInvalidEvent: %v", err)
			}
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("accepted an invalid event: %v", err)
		}
		payload, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(payload) || bytes.Contains(payload, []byte(`\u0000`)) {
			t.Fatalf("accepted an event whose payload PostgreSQL refuses: %s", payload)
		}
	})
}
