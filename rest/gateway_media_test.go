package rest_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
)

// A direct send of media the chat's engine can tell it cannot send (the gateway
// engine without ffmpeg and a voice note that is not Ogg/Opus) is answered 422
// with details before anything is stored; what it can send goes out.
func TestDirectSendRefusesMediaTheEngineCannotSend(t *testing.T) {
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	key := e.NewKey("default", "*")
	id := createEngine(e, key, "gateway")["id"].(string)
	f := fakes.latest(id)
	f.checkMedia = func(kind, ct string) error {
		if kind == "voice" && !strings.Contains(ct, "ogg") {
			return errors.New("no ffmpeg here")
		}
		return nil
	}
	f.pair("15550001111:7@s.whatsapp.net")
	e.Eventually(10*time.Second, "the paired gateway in ping", func() bool { return pinged(e, key, id) })

	voice := func(data string) map[string]any {
		return map[string]any{"type": "media", "mediaKind": "voice", "withTyping": false,
			"mediaBase64": base64.StdEncoding.EncodeToString([]byte(data))}
	}
	wav := "RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00"
	r := e.Do("POST", "/v1/messages/+15550002222", key, voice(wav))
	if r.Status != 422 || r.Error()["code"] != "validation_failed" || !strings.Contains(string(r.Raw), "mediaKind") || !strings.Contains(string(r.Raw), "no ffmpeg here") {
		t.Fatalf("voice note of WAV = %d %s", r.Status, r.Raw)
	}
	if list := e.Do("GET", "/v1/messages?limit=10", key, nil); strings.Contains(string(list.Raw), "voice") {
		t.Errorf("the refused message was stored: %s", list.Raw)
	}
	if r := e.Do("POST", "/v1/messages/+15550002222", key, voice("OggS\x00\x02 an Ogg/Opus voice note")); r.Status != 201 {
		t.Fatalf("voice note of Ogg = %d %s", r.Status, r.Raw)
	}
	if n := len(f.sends()); n != 1 {
		t.Errorf("the gateway was asked to send %d messages, want 1", n)
	}
	// The type the engine was asked about is sniffed from the bytes.
	f.mu.Lock()
	asked := append([]string(nil), f.asked...)
	f.mu.Unlock()
	if diff := cmp.Diff([]string{"voice audio/wave", "voice application/ogg"}, asked); diff != "" {
		t.Errorf("CheckMedia questions (-want +got):\n%s", diff)
	}
}
