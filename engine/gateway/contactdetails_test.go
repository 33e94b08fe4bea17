package gateway

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow/proto/waVnameCert"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// ContactDetails reaches GetUserInfo, GetBusinessProfile (business accounts
// only) and GetProfilePictureInfo (only with a picture id) with the contact's
// JID, and maps what they answer.
func TestContactDetailsCalls(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	person := types.NewJID("15551230001", types.DefaultUserServer)
	shop := types.NewJID("15551230002", types.DefaultUserServer)
	shy := types.NewJID("15551230003", types.DefaultUserServer)
	dev := []types.JID{types.NewADJID(person.User, 0, 1)}
	h.f.profiles = fakeProfiles{
		users: map[types.JID]types.UserInfo{
			person: {Status: "At the gym", PictureID: "111", Devices: dev},
			shop: {Status: "Open daily", Devices: dev, VerifiedName: &types.VerifiedName{
				Details: &waVnameCert.VerifiedNameCertificate_Details{VerifiedName: proto.String("Shop Ltd")}}},
			shy: {PictureID: "333", Devices: dev},
		},
		business: map[types.JID]*types.BusinessProfile{shop: {JID: shop, Address: "1 Main St", Email: "hi@shop.example",
			Categories: []types.Category{{ID: "1", Name: "Bakery"}}, ProfileOptions: map[string]string{"website": "https://shop.example"},
			BusinessHoursTimeZone: "Europe/Lisbon", BusinessHours: []types.BusinessHoursConfig{{DayOfWeek: "mon", Mode: "specific_hours", OpenTime: "540", CloseTime: "1080"}}}},
		pictures: map[types.JID]*types.ProfilePictureInfo{person: {ID: "111", URL: "https://pps.whatsapp.net/v/t61/111.jpg", Type: "image"}},
		hidden:   map[types.JID]bool{shy: true},
	}
	got, err := h.e.ContactDetails(ctx, "15551230001@c.us")
	want := engine.ContactDetails{About: "At the gym", Picture: &engine.ProfilePicture{ID: "111", URL: "https://pps.whatsapp.net/v/t61/111.jpg"}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("person: %v (-want +got):\n%s", err, cmp.Diff(want, got))
	}
	got, err = h.e.ContactDetails(ctx, "15551230002@c.us")
	want = engine.ContactDetails{About: "Open daily", IsBusiness: true, Business: &engine.BusinessProfile{Name: "Shop Ltd", Address: "1 Main St",
		Email: "hi@shop.example", Websites: []string{"https://shop.example"}, Categories: []string{"Bakery"}, Timezone: "Europe/Lisbon",
		Hours: []engine.BusinessHours{{Day: "mon", Mode: "specific_hours", OpenTime: 540, CloseTime: 1080}}}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("shop: %v (-want +got):\n%s", err, cmp.Diff(want, got))
	}
	if got, err = h.e.ContactDetails(ctx, "15551230003@c.us"); err != nil || got.Picture != nil {
		t.Errorf("hidden picture: %+v, %v", got, err)
	}
	if _, err = h.e.ContactDetails(ctx, "15551239999@c.us"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("not on WhatsApp: %v, want ErrNotFound", err)
	}
	wantAsks := []string{
		"GetUserInfo 15551230001@s.whatsapp.net", "GetProfilePictureInfo 15551230001@s.whatsapp.net",
		"GetUserInfo 15551230002@s.whatsapp.net", "GetBusinessProfile 15551230002@s.whatsapp.net",
		"GetUserInfo 15551230003@s.whatsapp.net", "GetProfilePictureInfo 15551230003@s.whatsapp.net",
		"GetUserInfo 15551239999@s.whatsapp.net",
	}
	if diff := cmp.Diff(wantAsks, h.f.profiles.asks); diff != "" {
		t.Errorf("whatsmeow calls (-want +got):\n%s", diff)
	}
}

// whatsmeow's events of a contact's details changing become contact reports
// whose Changed says what changed; a group's picture, a first push name and a
// first business name are not changes.
func TestContactChangeEvents(t *testing.T) {
	h := newHarness(t, true)
	user := types.NewJID("15551230001", types.DefaultUserServer)
	group := types.NewJID("120363000000000009", types.GroupServer)
	at := time.Unix(1_790_000_000, 0)
	h.f.emit(&events.Picture{JID: user, PictureID: "112", Timestamp: at})
	h.f.emit(&events.Picture{JID: group, PictureID: "9", Timestamp: at})
	h.f.emit(&events.UserAbout{JID: user, Status: "Busy", Timestamp: at})
	h.f.emit(&events.BusinessName{JID: user, NewBusinessName: "Shop"})
	h.f.emit(&events.BusinessName{JID: user, OldBusinessName: "Shop", NewBusinessName: "Shop Ltd"})
	h.f.emit(&events.PushName{JID: user, NewPushName: "Ana"})
	h.f.emit(&events.PushName{JID: user, OldPushName: "Ana", NewPushName: "Ana B"})
	var got []string
	for _, ev := range h.sink.take() {
		if ev.History == nil {
			continue
		}
		for _, c := range ev.History.Contacts {
			got = append(got, c.ID+" "+c.Changed+" "+c.PushName)
		}
	}
	want := []string{"15551230001@c.us picture ", "15551230001@c.us about ", "15551230001@c.us  ", "15551230001@c.us business_name ",
		"15551230001@c.us  Ana", "15551230001@c.us push_name Ana B"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("contact reports (-want +got):\n%s", diff)
	}
}
