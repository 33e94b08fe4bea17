package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	waCommon "go.mau.fi/whatsmeow/proto/waCommon"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	waHistorySync "go.mau.fi/whatsmeow/proto/waHistorySync"
	waWeb "go.mau.fi/whatsmeow/proto/waWeb"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/media"
)

var (
	contact    = types.NewJID("15552223333", types.DefaultUserServer)
	contactLID = types.NewJID("88882223333", types.HiddenUserServer)
	member     = types.NewJID("15554445555", types.DefaultUserServer)
	group      = types.NewJID("120363000000000042", types.GroupServer)
	at         = time.Unix(1_800_000_100, 0)
)

// ignoreEventMeta leaves out of comparisons what the engine stamps on every event.
var ignoreEventMeta = cmpopts.IgnoreFields(engine.Event{}, "WorkspaceID", "EngineID")

type mediaStore map[string][]byte

func (m mediaStore) Open(_ context.Context, u string) (io.ReadCloser, media.Object, bool, error) {
	d, ok := m[u]
	if !ok {
		return nil, media.Object{}, false, nil
	}
	return io.NopCloser(bytes.NewReader(d)), media.Object{URL: u, ContentType: "image/png", Filename: "pic.png", Size: int64(len(d))}, true, nil
}

func TestSendUsesTheChosenWireIDAndARetryReusesIt(t *testing.T) {
	h := newHarness(t, true)
	ctx := context.Background()
	out := engine.Outgoing{WireID: engine.WireID("msg_1"), To: "15552223333@c.us", Type: "text", Text: "hello"}
	k1, err := h.e.Send(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	// A crash after the network took it but before the key was stored: the
	// retry sends the same message again, under the same id.
	k2, err := h.e.Send(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: out.WireID}
	if diff := cmp.Diff(want, k1); diff != "" {
		t.Errorf("key (-want +got):\n%s", diff)
	}
	if k1 != k2 {
		t.Errorf("retry key %v, first %v", k2, k1)
	}
	if len(h.f.sent) != 2 {
		t.Fatalf("sent %d", len(h.f.sent))
	}
	for _, s := range h.f.sent {
		if len(s.extra) != 1 || string(s.extra[0].ID) != out.WireID {
			t.Errorf("send extra %+v, want ID %s", s.extra, out.WireID)
		}
		if s.to != contact {
			t.Errorf("to %v", s.to)
		}
	}
	if !strings.HasPrefix(out.WireID, "3EB0") || len(out.WireID) != 22 || strings.ToUpper(out.WireID) != out.WireID {
		t.Errorf("wire id %q is not shaped like a WhatsApp id", out.WireID)
	}
}

func TestSendBuildsTheWhatsAppMessage(t *testing.T) {
	pngURL := "https://sb.example/media/tok/pic.png"
	tests := []struct {
		name  string
		out   engine.Outgoing
		check func(t *testing.T, m *waE2E.Message, f *fakeClient)
	}{
		{"plain text", engine.Outgoing{Type: "text", Text: "hi"}, func(t *testing.T, m *waE2E.Message, _ *fakeClient) {
			if m.GetConversation() != "hi" {
				t.Errorf("message %v", m)
			}
		}},
		{"mention", engine.Outgoing{Type: "text", Text: "hey @[Ann](15554445555@c.us)!"}, func(t *testing.T, m *waE2E.Message, _ *fakeClient) {
			x := m.GetExtendedTextMessage()
			if x.GetText() != "hey @15554445555!" {
				t.Errorf("text %q", x.GetText())
			}
			if diff := cmp.Diff([]string{"15554445555@s.whatsapp.net"}, x.GetContextInfo().GetMentionedJID()); diff != "" {
				t.Errorf("mentions: %s", diff)
			}
		}},
		{"reply in a group", engine.Outgoing{To: "120363000000000042@g.us", Type: "text", Text: "ok",
			ReplyTo: "false_120363000000000042@g.us_ABC_15554445555@c.us"}, func(t *testing.T, m *waE2E.Message, _ *fakeClient) {
			ci := m.GetExtendedTextMessage().GetContextInfo()
			if ci.GetStanzaID() != "ABC" || ci.GetParticipant() != "15554445555@s.whatsapp.net" || ci.GetQuotedMessage() == nil {
				t.Errorf("context %v", ci)
			}
		}},
		{"reply to my own message", engine.Outgoing{Type: "text", Text: "ok", ReplyTo: "true_15552223333@c.us_3EB0X"}, func(t *testing.T, m *waE2E.Message, _ *fakeClient) {
			ci := m.GetExtendedTextMessage().GetContextInfo()
			if ci.GetStanzaID() != "3EB0X" || ci.GetParticipant() != "15550001111@s.whatsapp.net" {
				t.Errorf("context %v", ci)
			}
		}},
		{"poll", engine.Outgoing{Type: "poll", PollQuestion: "Lunch?", PollOptions: []string{"Pizza", "Sushi"}}, func(t *testing.T, m *waE2E.Message, _ *fakeClient) {
			p := m.GetPollCreationMessage()
			if p.GetName() != "Lunch?" || len(p.GetOptions()) != 2 || p.GetSelectableOptionsCount() != 1 {
				t.Errorf("poll %v", p)
			}
		}},
		{"media from the media store", engine.Outgoing{Type: "media", MediaKind: "image", MediaURL: pngURL, Text: "look"}, func(t *testing.T, m *waE2E.Message, f *fakeClient) {
			im := m.GetImageMessage()
			if im.GetCaption() != "look" || im.GetDirectPath() != "/v/x" || im.GetMimetype() != "image/png" {
				t.Errorf("image %v", im)
			}
			if len(f.uploads) != 1 || string(f.uploads[0]) != "PNGDATA" {
				t.Errorf("uploads %q", f.uploads)
			}
		}},
		{"document keeps its name", engine.Outgoing{Type: "media", MediaKind: "document", MediaURL: pngURL, MediaFilename: "a.pdf"}, func(t *testing.T, m *waE2E.Message, _ *fakeClient) {
			if d := m.GetDocumentMessage(); d.GetFileName() != "a.pdf" {
				t.Errorf("document %v", d)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true, func(c *Config) { c.Media = mediaStore{pngURL: []byte("PNGDATA")} })
			tc.out.WireID = engine.WireID(tc.name)
			if tc.out.To == "" {
				tc.out.To = "15552223333@c.us"
			}
			if _, err := h.e.Send(context.Background(), tc.out); err != nil {
				t.Fatal(err)
			}
			tc.check(t, h.f.sent[0].msg, h.f)
		})
	}
}

func TestSendFailsFastWhenTheEngineCannotSend(t *testing.T) {
	ctx := context.Background()
	out := engine.Outgoing{WireID: "3EB0AA", To: "15552223333@c.us", Type: "text", Text: "x"}

	unpaired := newHarness(t, false)
	if _, err := unpaired.e.Send(ctx, out); !errors.Is(err, ErrNotPaired) {
		t.Errorf("unpaired: %v", err)
	}
	offline := newHarness(t, true)
	offline.f.connected = false
	if _, err := offline.e.Send(ctx, out); !errors.Is(err, ErrNotConnected) {
		t.Errorf("offline: %v", err)
	}
	bad := newHarness(t, true)
	if _, err := bad.e.Send(ctx, engine.Outgoing{WireID: "3EB0AA", To: "nobody@example.com", Type: "text"}); !errors.Is(err, engine.ErrRejected) {
		t.Errorf("bad recipient: %v", err)
	}
	missing := newHarness(t, true, func(c *Config) { c.Media = mediaStore{} })
	missing.e.http = failingHTTP()
	if _, err := missing.e.Send(ctx, engine.Outgoing{WireID: "3EB0AB", To: "15552223333@c.us", Type: "media", MediaKind: "image", MediaURL: "https://media.example/gone.png"}); err == nil || errors.Is(err, engine.ErrRejected) {
		t.Errorf("unreachable media should be transient, got %v", err)
	}
	closed := newHarness(t, true)
	_ = closed.e.Close()
	if _, err := closed.e.Send(ctx, out); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

func TestSendRejectsNumbersNotOnWhatsApp(t *testing.T) {
	h := newHarness(t, true)
	ctx := context.Background()
	h.f.notOnWA["+15550000000"] = true
	_, err := h.e.Send(ctx, engine.Outgoing{WireID: "3EB0N1", To: "15550000000@c.us", Type: "text", Text: "x"})
	if !errors.Is(err, engine.ErrRejected) || !strings.Contains(err.Error(), "not on WhatsApp") {
		t.Errorf("send to a number not on WhatsApp: %v", err)
	}
	res := h.e.SendBatch(ctx, []engine.Outgoing{
		{WireID: "3EB0N2", To: "15550000000@c.us", Type: "text", Text: "x"},
		{WireID: "3EB0N3", To: "15552223333@c.us", Type: "text", Text: "x"},
		{WireID: "3EB0N4", To: "15554445555@c.us", Type: "text", Text: "x"},
		{WireID: "3EB0N5", To: "120363000000000042@g.us", Type: "text", Text: "x"},
	})
	if !errors.Is(res[0].Err, engine.ErrRejected) || res[1].Err != nil || res[2].Err != nil || res[3].Err != nil {
		t.Errorf("batch %+v", res)
	}
	// Each number is looked up once; the batch asks for its unknown ones at once.
	if diff := cmp.Diff([][]string{{"+15550000000"}, {"+15552223333", "+15554445555"}}, h.f.onWAAsks); diff != "" {
		t.Errorf("lookups (-want +got):\n%s", diff)
	}
}

func TestMediaFetchedOverHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok.jpg":
			w.Header().Set("Content-Type", "image/jpeg")
			_, _ = w.Write([]byte("JPEGDATA"))
		case "/big.bin":
			_, _ = w.Write(make([]byte, 2048))
		case "/busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	h := newHarness(t, true, func(c *Config) { c.HTTP = srv.Client(); c.MaxMediaBytes = 1024 })
	ctx := context.Background()
	send := func(path string) error {
		_, err := h.e.Send(ctx, engine.Outgoing{WireID: engine.WireID(path), To: "15552223333@c.us", Type: "media", MediaKind: "image", MediaURL: srv.URL + path})
		return err
	}
	if err := send("/ok.jpg"); err != nil {
		t.Fatal(err)
	}
	if im := h.f.sent[0].msg.GetImageMessage(); im.GetMimetype() != "image/jpeg" || string(h.f.uploads[0]) != "JPEGDATA" {
		t.Errorf("image %v", im)
	}
	for path, rejected := range map[string]bool{"/gone.jpg": true, "/big.bin": true, "/busy": false} {
		if err := send(path); err == nil || errors.Is(err, engine.ErrRejected) != rejected {
			t.Errorf("%s: %v (want rejected %v)", path, err, rejected)
		}
	}
	// The default client is netguard's: a loopback URL is refused, for now.
	guarded := newHarness(t, true)
	if _, err := guarded.e.Send(ctx, engine.Outgoing{WireID: "3EB0G", To: "15552223333@c.us", Type: "media", MediaKind: "image", MediaURL: srv.URL + "/ok.jpg"}); err == nil {
		t.Error("netguard let a loopback media URL through")
	}
}

func TestSendBatchStopsAtTheFirstTransientFailure(t *testing.T) {
	h := newHarness(t, true)
	ms := []engine.Outgoing{
		{WireID: "3EB01", To: "15552223333@c.us", Type: "text", Text: "a"},
		{WireID: "3EB02", To: "bad@nowhere", Type: "text", Text: "b"},
		{WireID: "3EB03", To: "15552223333@c.us", Type: "text", Text: "c"},
	}
	res := h.e.SendBatch(context.Background(), ms)
	if res[0].Err != nil || res[0].Key.ID != "3EB01" || !errors.Is(res[1].Err, engine.ErrRejected) || res[2].Err != nil {
		t.Fatalf("batch %+v", res)
	}
	h.f.sendErr = errors.New("socket closed")
	res = h.e.SendBatch(context.Background(), ms)
	for i, r := range res {
		if r.Err == nil || errors.Is(r.Err, engine.ErrRejected) && i != 1 {
			t.Errorf("message %d: %v", i, r.Err)
		}
	}
}

func TestReceiptsBecomeStatuses(t *testing.T) {
	own := types.NewADJID("15550001111", 0, 7)
	ownPhone := types.NewADJID("15550001111", 0, 0)
	src := func(chat, sender types.JID) types.MessageSource {
		return types.MessageSource{Chat: chat, Sender: sender, IsGroup: chat.Server == types.GroupServer}
	}
	tests := []struct {
		name string
		r    events.Receipt
		want []engine.Event
	}{
		{"delivered", events.Receipt{MessageSource: src(contact, contact), MessageIDs: []string{"3EB0A", "3EB0B"}, Timestamp: at, Type: types.ReceiptTypeDelivered},
			[]engine.Event{
				{ID: "wa_ack_15552223333@c.us_3EB0A_2", Type: engine.EventAck, At: at, Ack: engine.AckDevice, Key: engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "3EB0A"}},
				{ID: "wa_ack_15552223333@c.us_3EB0B_2", Type: engine.EventAck, At: at, Ack: engine.AckDevice, Key: engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "3EB0B"}},
			}},
		{"read", events.Receipt{MessageSource: src(contact, contact), MessageIDs: []string{"3EB0A"}, Timestamp: at, Type: types.ReceiptTypeRead},
			[]engine.Event{{ID: "wa_ack_15552223333@c.us_3EB0A_3", Type: engine.EventAck, At: at, Ack: engine.AckRead, Key: engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "3EB0A"}}}},
		{"played", events.Receipt{MessageSource: src(contact, contact), MessageIDs: []string{"3EB0A"}, Timestamp: at, Type: types.ReceiptTypePlayed},
			[]engine.Event{{ID: "wa_ack_15552223333@c.us_3EB0A_4", Type: engine.EventAck, At: at, Ack: engine.AckPlayed, Key: engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "3EB0A"}}}},
		{"read in a group", events.Receipt{MessageSource: src(group, member), MessageIDs: []string{"3EB0G"}, Timestamp: at, Type: types.ReceiptTypeRead},
			[]engine.Event{{ID: "wa_ack_120363000000000042@g.us_3EB0G_3", Type: engine.EventAck, At: at, Ack: engine.AckRead, Key: engine.Key{FromMe: true, Remote: "120363000000000042@g.us", ID: "3EB0G"}}}},
		{"by LID, mapped to the phone number", events.Receipt{MessageSource: types.MessageSource{Chat: contactLID, Sender: contactLID, SenderAlt: contact},
			MessageIDs: []string{"3EB0L"}, Timestamp: at, Type: types.ReceiptTypeDelivered},
			[]engine.Event{
				{ID: "wa_lid_88882223333@lid_15552223333@c.us", Type: engine.EventHistory, At: at,
					History: &engine.History{Contacts: []engine.ContactInfo{{ID: "15552223333@c.us", LID: "88882223333@lid"}}}},
				{ID: "wa_ack_15552223333@c.us_3EB0L_2", Type: engine.EventAck, At: at, Ack: engine.AckDevice, Key: engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "3EB0L"}},
			}},
		{"own linked device: sender receipt", events.Receipt{MessageSource: types.MessageSource{Chat: contact, Sender: ownPhone, IsFromMe: true}, MessageIDs: []string{"3EB0A"}, Type: types.ReceiptTypeSender}, nil},
		{"own linked device: delivered duplicate", events.Receipt{MessageSource: types.MessageSource{Chat: contact, Sender: own}, MessageIDs: []string{"3EB0A"}, Type: types.ReceiptTypeDelivered}, nil},
		{"own linked device by LID: read-self", events.Receipt{MessageSource: types.MessageSource{Chat: contact, Sender: types.NewJID("99990001111", types.HiddenUserServer)}, MessageIDs: []string{"3EB0A"}, Type: types.ReceiptTypeReadSelf}, nil},
		{"retry", events.Receipt{MessageSource: src(contact, contact), MessageIDs: []string{"3EB0A"}, Type: types.ReceiptTypeRetry}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true)
			r := tc.r
			if !h.f.emit(&r) {
				t.Fatal("handler failed")
			}
			if diff := cmp.Diff(tc.want, h.sink.take(), ignoreEventMeta, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func msgInfo(chat, sender types.JID, id string, fromMe bool) types.MessageInfo {
	return types.MessageInfo{MessageSource: types.MessageSource{Chat: chat, Sender: sender, IsFromMe: fromMe, IsGroup: chat.Server == types.GroupServer},
		ID: id, PushName: "Ann", Timestamp: at}
}

func TestIncomingEventsOfEveryKind(t *testing.T) {
	me := types.NewJID("15550001111", types.DefaultUserServer)
	key := func(fromMe bool, remote, id, participant string) engine.Key {
		return engine.Key{FromMe: fromMe, Remote: remote, ID: id, Participant: participant}
	}
	inKey := key(false, "15552223333@c.us", "IN1", "")
	mine := &waCommon.MessageKey{RemoteJID: proto.String(contact.String()), FromMe: proto.Bool(false), ID: proto.String("3EB0MINE")}
	pollHash := sha256.Sum256([]byte("Sushi"))
	tests := []struct {
		name  string
		evt   *events.Message
		setup func(h *harness)
		want  []engine.Event
	}{
		{"text", &events.Message{Info: msgInfo(contact, contact, "IN1", false), Message: &waE2E.Message{Conversation: proto.String("hello")}},
			nil, []engine.Event{{ID: "wa_msg_" + inKey.Serialized(), Type: engine.EventMessage, At: at, Key: inKey,
				Message: &engine.Incoming{Key: inKey, From: "15552223333@c.us", SenderName: "Ann", Type: "text", Text: "hello"}}}},
		{"reply to my message (ephemeral)", &events.Message{Info: msgInfo(contact, contact, "IN1", false), Message: &waE2E.Message{EphemeralMessage: &waE2E.FutureProofMessage{
			Message: &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("yes"),
				ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String("3EB0MINE"), Participant: proto.String(me.String())}}}}}},
			nil, []engine.Event{{ID: "wa_msg_" + inKey.Serialized(), Type: engine.EventMessage, At: at, Key: inKey,
				Message: &engine.Incoming{Key: inKey, From: "15552223333@c.us", SenderName: "Ann", Type: "text", Text: "yes", QuotedKey: "true_15552223333@c.us_3EB0MINE"}}}},
		{"image in a group", &events.Message{Info: msgInfo(group, member, "G1", false), Message: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("pic"), Mimetype: proto.String("image/jpeg")}}},
			nil, []engine.Event{{ID: "wa_msg_false_120363000000000042@g.us_G1_15554445555@c.us", Type: engine.EventMessage, At: at,
				Key: key(false, "120363000000000042@g.us", "G1", "15554445555@c.us"),
				Message: &engine.Incoming{Key: key(false, "120363000000000042@g.us", "G1", "15554445555@c.us"), From: "15554445555@c.us", SenderName: "Ann", Type: "media", Text: "pic",
					Media: &engine.MediaInfo{Kind: "image", MimeType: "image/jpeg", Caption: "pic"}}}}},
		{"poll", &events.Message{Info: msgInfo(contact, contact, "IN1", false), Message: &waE2E.Message{PollCreationMessageV3: &waE2E.PollCreationMessage{Name: proto.String("Q?"),
			Options: []*waE2E.PollCreationMessage_Option{{OptionName: proto.String("a")}}}}},
			nil, []engine.Event{{ID: "wa_msg_" + inKey.Serialized(), Type: engine.EventMessage, At: at, Key: inKey,
				Message: &engine.Incoming{Key: inKey, From: "15552223333@c.us", SenderName: "Ann", Type: "poll", Text: "Q?"}}}},
		{"edit", &events.Message{Info: msgInfo(contact, contact, "EDIT1", false), Message: &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type: waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(), Key: &waCommon.MessageKey{FromMe: proto.Bool(true), ID: proto.String("IN1")},
			EditedMessage: &waE2E.Message{Conversation: proto.String("hello again")}}}},
			nil, []engine.Event{{ID: "wa_edit_false_15552223333@c.us_EDIT1", Type: engine.EventEdited, At: at, Key: inKey,
				Message: &engine.Incoming{Key: inKey, From: "15552223333@c.us", SenderName: "Ann", Type: "text", Text: "hello again"}}}},
		{"revoke", &events.Message{Info: msgInfo(contact, contact, "REV1", false), Message: &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type: waE2E.ProtocolMessage_REVOKE.Enum(), Key: &waCommon.MessageKey{FromMe: proto.Bool(true), ID: proto.String("IN1")}}}},
			nil, []engine.Event{{ID: "wa_revoke_false_15552223333@c.us_REV1", Type: engine.EventRevoked, At: at, Key: inKey,
				Message: &engine.Incoming{Key: inKey, From: "15552223333@c.us", SenderName: "Ann"}}}},
		{"reaction to my message", &events.Message{Info: msgInfo(contact, contact, "R1", false), Message: &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Key: mine, Text: proto.String("👍")}}},
			nil, []engine.Event{{ID: "wa_reaction_false_15552223333@c.us_R1", Type: engine.EventReaction, At: at, Key: key(true, "15552223333@c.us", "3EB0MINE", ""), Reaction: "👍",
				Message: &engine.Incoming{Key: key(false, "15552223333@c.us", "R1", ""), From: "15552223333@c.us", SenderName: "Ann"}}}},
		{"my own reaction from the phone", &events.Message{Info: msgInfo(contact, me, "R2", true), Message: &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{
			Key: &waCommon.MessageKey{FromMe: proto.Bool(false), ID: proto.String("IN1")}, Text: proto.String("❤")}}},
			nil, []engine.Event{{ID: "wa_reaction_true_15552223333@c.us_R2", Type: engine.EventReaction, At: at, Key: inKey, Reaction: "❤"}}},
		{"poll vote, decrypted and named", &events.Message{Info: msgInfo(contact, contact, "V1", false), Message: &waE2E.Message{PollUpdateMessage: &waE2E.PollUpdateMessage{PollCreationMessageKey: mine}}},
			func(h *harness) {
				h.e.mem.putPoll("true_15552223333@c.us_3EB0MINE", []string{"Pizza", "Sushi"})
				h.f.vote = &waE2E.PollVoteMessage{SelectedOptions: [][]byte{pollHash[:], {1, 2}}}
			},
			[]engine.Event{{ID: "wa_vote_false_15552223333@c.us_V1", Type: engine.EventPollVote, At: at, Key: key(true, "15552223333@c.us", "3EB0MINE", ""),
				Votes: []string{"Sushi", "sha256:0102"}, Message: &engine.Incoming{Key: key(false, "15552223333@c.us", "V1", ""), From: "15552223333@c.us", SenderName: "Ann"}}}},
		{"pin in a group", &events.Message{Info: msgInfo(group, member, "P1", false), Message: &waE2E.Message{
			PinInChatMessage:   &waE2E.PinInChatMessage{Type: waE2E.PinInChatMessage_PIN_FOR_ALL.Enum(), Key: &waCommon.MessageKey{FromMe: proto.Bool(true), ID: proto.String("G1")}},
			MessageContextInfo: &waE2E.MessageContextInfo{MessageAddOnDurationInSecs: proto.Uint32(86400)}}},
			nil, []engine.Event{
				{ID: "wa_pin_false_120363000000000042@g.us_P1_15554445555@c.us", Type: engine.EventPin, At: at, Key: key(false, "120363000000000042@g.us", "G1", "15554445555@c.us"), Pinned: 24 * time.Hour},
				{ID: "wa_grouppin_false_120363000000000042@g.us_P1_15554445555@c.us", Type: engine.EventGroup, At: at, Group: &engine.GroupChange{GroupID: "120363000000000042@g.us",
					Action: "message_pinned", By: "15554445555@c.us", Value: "false_120363000000000042@g.us_G1_15554445555@c.us", Me: "15550001111@c.us"}},
			}},
		{"sent from the account's phone", &events.Message{Info: msgInfo(contact, me, "3EB0PHONE", true), Message: &waE2E.Message{Conversation: proto.String("from my phone")}},
			nil, []engine.Event{{ID: "wa_own_true_15552223333@c.us_3EB0PHONE", Type: engine.EventHistory, At: at, History: &engine.History{Messages: []engine.HistoryMessage{{
				Incoming: engine.Incoming{Key: key(true, "15552223333@c.us", "3EB0PHONE", ""), From: "15550001111@c.us", SenderName: "Ann", Type: "text", Text: "from my phone"},
				FromMe:   true, At: at, Ack: engine.AckServer, WireType: "chat"}}}}}},
		// A contact's status is a status event (status_test.go); the account's own,
		// posted on its phone, is not reported.
		{"own status from the phone ignored", &events.Message{Info: msgInfo(types.StatusBroadcastJID, me, "S1", true), Message: &waE2E.Message{Conversation: proto.String("story")}}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true)
			if tc.setup != nil {
				tc.setup(h)
			}
			if !h.f.emit(tc.evt) {
				t.Fatal("handler failed")
			}
			if diff := cmp.Diff(tc.want, h.sink.take(), ignoreEventMeta, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAFailingSinkLeavesTheEventUnacknowledged(t *testing.T) {
	h := newHarness(t, true)
	h.sink.fail = 100
	evt := &events.Message{Info: msgInfo(contact, contact, "IN1", false), Message: &waE2E.Message{Conversation: proto.String("x")}}
	if h.f.emit(evt) {
		t.Fatal("handler reported success with the sink down")
	}
	h.sink.fail = 2 // a blip: retried within the handler
	if !h.f.emit(evt) || len(h.sink.take()) != 1 {
		t.Fatal("a sink blip was not retried")
	}
	// A history sync is handed over once: the engine keeps trying.
	h.sink.fail = 8
	hs := &events.HistorySync{Data: &waHistorySync.HistorySync{SyncType: waHistorySync.HistorySync_RECENT.Enum(),
		Conversations: []*waHistorySync.Conversation{{ID: proto.String(contact.String()), Messages: []*waHistorySync.HistorySyncMsg{webMsg(contact, "H1", false, 1_800_000_000, "x")}}}}}
	if !h.f.emit(hs) || len(h.sink.take()) != 1 {
		t.Fatal("a history sync was given up")
	}
}

func webMsg(chat types.JID, id string, fromMe bool, ts int64, text string) *waHistorySync.HistorySyncMsg {
	return &waHistorySync.HistorySyncMsg{Message: &waWeb.WebMessageInfo{
		Key:              &waCommon.MessageKey{RemoteJID: proto.String(chat.String()), FromMe: proto.Bool(fromMe), ID: proto.String(id)},
		MessageTimestamp: proto.Uint64(uint64(ts)), Message: &waE2E.Message{Conversation: proto.String(text)},
		Status: waWeb.WebMessageInfo_READ.Enum(),
	}}
}

func TestHistorySyncAndOlderPages(t *testing.T) {
	h := newHarness(t, true)
	hs := &events.HistorySync{Data: &waHistorySync.HistorySync{
		SyncType: waHistorySync.HistorySync_INITIAL_BOOTSTRAP.Enum(), ChunkOrder: proto.Uint32(1),
		Pushnames: []*waHistorySync.Pushname{{ID: proto.String(contact.String()), Pushname: proto.String("Ann")}},
		Conversations: []*waHistorySync.Conversation{{
			ID: proto.String(contact.String()), Name: proto.String("Ann B"), UnreadCount: proto.Uint32(2), Archived: proto.Bool(false),
			Messages: []*waHistorySync.HistorySyncMsg{webMsg(contact, "H2", false, 1_800_000_200, "second"), webMsg(contact, "H1", true, 1_800_000_100, "first")},
		}},
	}}
	if !h.f.emit(hs) {
		t.Fatal("handler failed")
	}
	two, no := 2, false
	want := []engine.Event{
		{ID: "wa_hs_" + h.f.Pairing() + "_0_1_contacts", Type: engine.EventHistory, History: &engine.History{Contacts: []engine.ContactInfo{{ID: "15552223333@c.us", PushName: "Ann"}}}},
		{ID: "wa_hs_" + h.f.Pairing() + "_0_1_15552223333@c.us", Type: engine.EventHistory, History: &engine.History{
			Chats: []engine.ChatState{{ID: "15552223333@c.us", Kind: "contact", Name: "Ann B", UnreadCount: &two, Archived: &no}},
			Messages: []engine.HistoryMessage{
				{Incoming: engine.Incoming{Key: engine.Key{Remote: "15552223333@c.us", ID: "H2"}, From: "15552223333@c.us", Type: "text", Text: "second"},
					At: time.Unix(1_800_000_200, 0), Ack: engine.AckServer, WireType: "chat"},
				{Incoming: engine.Incoming{Key: engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "H1"}, From: "15550001111@c.us", Type: "text", Text: "first"},
					FromMe: true, At: time.Unix(1_800_000_100, 0), Ack: engine.AckRead, WireType: "chat"},
			},
			Coverage: []engine.Coverage{{ChatID: "15552223333@c.us", OldestAt: time.Unix(1_800_000_100, 0)}},
		}},
	}
	if diff := cmp.Diff(want, h.sink.take(), ignoreEventMeta, cmpopts.IgnoreFields(engine.Event{}, "At"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("history events (-want +got):\n%s", diff)
	}
	if !h.e.State().HasSynced {
		t.Error("HasSynced not set")
	}

	// An older page: the engine asks the phone, anchored on the oldest message it knows.
	type result struct {
		page engine.HistoryPage
		err  error
	}
	done := make(chan result, 1)
	go func() {
		p, err := h.e.LoadOlder(context.Background(), "15552223333@c.us", time.Unix(1_800_000_150, 0))
		done <- result{p, err}
	}()
	waitFor(t, "the history request", func() bool {
		h.f.mu.Lock()
		defer h.f.mu.Unlock()
		return len(h.f.peer) == 1
	})
	req := h.f.peer[0].GetProtocolMessage().GetPeerDataOperationRequestMessage().GetHistorySyncOnDemandRequest()
	if req.GetOldestMsgID() != "H1" || !req.GetOldestMsgFromMe() || req.GetOnDemandMsgCount() != HistoryPageSize || req.GetChatJID() != contact.String() {
		t.Fatalf("request %v", req)
	}
	h.f.emit(&events.HistorySync{Data: &waHistorySync.HistorySync{SyncType: waHistorySync.HistorySync_ON_DEMAND.Enum(),
		Conversations: []*waHistorySync.Conversation{{ID: proto.String(contact.String()), EndOfHistoryTransfer: proto.Bool(true),
			Messages: []*waHistorySync.HistorySyncMsg{webMsg(contact, "H0", false, 1_800_000_000, "zeroth")}}}}})
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if diff := cmp.Diff(engine.HistoryPage{Messages: 1, OldestAt: time.Unix(1_800_000_000, 0)}, r.page); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
	evs := h.sink.take()
	if len(evs) != 1 || evs[0].History == nil || len(evs[0].History.Chats) != 0 || !evs[0].History.Coverage[0].Complete {
		t.Errorf("on-demand events %+v", evs)
	}
	// A chat the engine knows nothing of has no history to ask for.
	p, err := h.e.LoadOlder(context.Background(), "15559999999@c.us", time.Now())
	if err != nil || !p.Unavailable {
		t.Errorf("unknown chat: %+v %v", p, err)
	}
}
