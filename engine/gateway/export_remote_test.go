package gateway

import (
	"context"
	"crypto/sha256"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine/remote"
)

// RemoteFake is a gateway engine over the whatsmeow fake served out of
// process, for the tests of package gateway_test (remote_test.go), which
// reach a real server through app/apptest.
type RemoteFake struct {
	f *fakeClient
	// Opened is the device each engine was opened with ("" for a new one).
	Opened []string
	paired bool
}

// NewRemoteFake is an unpaired device whose connection shows the QR codes qr.
func NewRemoteFake(qr ...string) *RemoteFake {
	f := newFake(false)
	f.qrCodes = qr
	return &RemoteFake{f: f}
}

// NewPairedRemoteFake is a device paired with the account +15550001111.
// Its engine connects as soon as it opens, as Open's does for a paired device,
// and its contacts' phones answer what it sends with delivery receipts.
func NewPairedRemoteFake() *RemoteFake {
	f := newFake(true)
	f.receipts = true
	return &RemoteFake{f: f, paired: true}
}

// Serve is ServeRemote over the fake.
func (r *RemoteFake) Serve(ctx context.Context, c *remote.Client, cfg Config) error {
	return serveRemote(ctx, c, cfg, func(_ context.Context, cfg Config) (*Engine, error) {
		r.Opened = append(r.Opened, cfg.DeviceJID)
		cfg.ReconnectMin, cfg.ReconnectMax = time.Millisecond, 5*time.Millisecond
		e := newEngine(cfg, r.f, func() (client, error) { return newFake(false), nil })
		e.retryWait = time.Millisecond
		if r.paired {
			e.startConnecting()
		}
		return e, nil
	})
}

// Pair is the phone scanning the QR code: the device of phone (digits) is
// paired, then connected.
func (r *RemoteFake) Pair(phone string) {
	dev := types.NewADJID(phone, 0, 9)
	r.f.mu.Lock()
	r.f.own, r.f.connected, r.f.pushName = dev, true, "Owner"
	r.f.mu.Unlock()
	r.f.emit(&events.PairSuccess{ID: dev})
	r.f.emit(&events.Connected{})
}

// Connects counts the fake's Connect calls.
func (r *RemoteFake) Connects() int {
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	return r.f.connects
}

// FakeSent is a message the engine handed to whatsmeow's SendMessage.
type FakeSent struct {
	To, Text string
}

// Sent lists what reached SendMessage.
func (r *RemoteFake) Sent() []FakeSent {
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	out := make([]FakeSent, 0, len(r.f.sent))
	for _, s := range r.f.sent {
		text := s.msg.GetConversation()
		if text == "" {
			text = s.msg.GetExtendedTextMessage().GetText()
		}
		out = append(out, FakeSent{To: s.to.String(), Text: text})
	}
	return out
}

// Receive is the network delivering a text from the phone number from
// (digits) with id; false when the engine did not take it (the sink refused).
func (r *RemoteFake) Receive(from, id, text string, at time.Time) bool {
	j := types.NewJID(from, types.DefaultUserServer)
	return r.f.deliver(&events.Message{Info: types.MessageInfo{MessageSource: types.MessageSource{Chat: j, Sender: j},
		ID: id, PushName: "Ann", Timestamp: at}, Message: &waE2E.Message{Conversation: proto.String(text)}})
}

// ReceiveImage is the network delivering a JPEG image, whose bytes the CDN
// serves, from the phone number from (digits) with id.
func (r *RemoteFake) ReceiveImage(from, id string, data []byte, at time.Time) bool {
	j := types.NewJID(from, types.DefaultUserServer)
	sum := sha256.Sum256(data)
	r.f.mu.Lock()
	r.f.download = data
	r.f.mu.Unlock()
	return r.f.deliver(&events.Message{Info: types.MessageInfo{MessageSource: types.MessageSource{Chat: j, Sender: j},
		ID: id, PushName: "Ann", Timestamp: at}, Message: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		Mimetype: proto.String("image/jpeg"), DirectPath: proto.String("/v/" + id), MediaKey: []byte("0123456789abcdef0123456789abcdef"),
		FileSHA256: sum[:], FileEncSHA256: sum[:], FileLength: proto.Uint64(uint64(len(data)))}}})
}
