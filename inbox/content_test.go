package inbox_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
)

// A message of any kind is stored with its content and wire type, received
// live or in a history sync.
func TestMessagesKeepTheirContent(t *testing.T) {
	in, ctx := lidWorld(t)
	chat := "15550001234@c.us"
	key := func(id string) engine.Key { return engine.Key{Remote: chat, ID: id} }
	now := time.Now().Truncate(time.Second)
	sum := strings.Repeat("ab", 32)
	img := engine.Incoming{Key: key("IMG"), From: chat, Type: "media", Text: "pic", Media: &engine.MediaInfo{Kind: "image", MimeType: "image/png",
		Caption: "pic", Size: 10, SHA256: sum, Width: 2, Height: 3}}
	place := engine.Incoming{Key: key("LOC"), From: chat, Type: engine.TypeLocation, Location: &engine.Location{Latitude: 1.5, Longitude: -2.5, Name: "Here", Address: "Street 1"}}
	cards := engine.Incoming{Key: key("VC"), From: chat, Type: engine.TypeVCard, Contacts: []engine.ContactCard{{DisplayName: "A", VCard: "BEGIN:VCARD\nEND:VCARD"}, {VCard: "BEGIN:VCARD\nFN:B\nEND:VCARD"}}}
	odd := engine.Incoming{Key: key("ODD"), From: chat, Type: engine.TypeUnknown, RawType: "eventMessage"}
	note := engine.Incoming{Key: key("PTV"), From: chat, Type: "media", Media: &engine.MediaInfo{Kind: "ptv", MimeType: "video/mp4", Seconds: 12}}
	var evs []engine.Event
	for _, m := range []engine.Incoming{img, place, cards} {
		evs = append(evs, engine.Event{ID: "msg_" + m.Key.ID, Type: engine.EventMessage, At: now, Key: m.Key, Message: &m})
	}
	evs = append(evs, engine.Event{ID: "hist", Type: engine.EventHistory, At: now, History: &engine.History{Messages: []engine.HistoryMessage{
		{Incoming: odd, At: now}, {Incoming: note, At: now, WireType: "ptv", MediaKind: "ptv", MediaMime: "video/mp4"}}}})
	report(t, in, evs...)

	type row struct {
		Type, Wire, Text, Kind, Mime, Sum, Name, Address, Raw string
		Size                                                  int64
		Width, Height, Seconds                                int
		Lat, Lon                                              *float64
		Cards, Names                                          []string
	}
	rows, err := in.Client.Message.Query().Order(ent.Asc(message.FieldWaID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]row{}
	for _, m := range rows {
		got[m.WaID] = row{m.Type, m.WireType, m.Text, m.MediaKind, m.MediaMime, m.MediaSha256, m.LocationName, m.LocationAddress, m.RawType,
			m.MediaSize, m.MediaWidth, m.MediaHeight, m.MediaSeconds, m.Latitude, m.Longitude, m.Vcards, m.VcardNames}
	}
	lat, lon := 1.5, -2.5
	want := map[string]row{
		"IMG": {Type: "media", Wire: "image", Text: "pic", Kind: "image", Mime: "image/png", Sum: sum, Size: 10, Width: 2, Height: 3},
		"LOC": {Type: "location", Wire: "location", Name: "Here", Address: "Street 1", Lat: &lat, Lon: &lon},
		"VC":  {Type: "vcard", Wire: "multi_vcard", Cards: []string{"BEGIN:VCARD\nEND:VCARD", "BEGIN:VCARD\nFN:B\nEND:VCARD"}, Names: []string{"A", ""}},
		"ODD": {Type: "unknown", Wire: "unknown", Raw: "eventMessage"},
		"PTV": {Type: "media", Wire: "ptv", Kind: "ptv", Mime: "video/mp4", Seconds: 12},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored rows (-want +got):\n%s", diff)
	}
}
