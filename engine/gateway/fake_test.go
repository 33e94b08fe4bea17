package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/proto/waMmsRetry"
	waSyncAction "go.mau.fi/whatsmeow/proto/waSyncAction"
	waVnameCert "go.mau.fi/whatsmeow/proto/waVnameCert"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"go.mau.fi/whatsmeow/util/cbcutil"
	"go.mau.fi/whatsmeow/util/gcmutil"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// fakeClient is the test double of the whatsmeow calls the engine makes.
type fakeClient struct {
	mu        sync.Mutex
	connected bool
	own, lid  types.JID
	alt       map[types.JID]types.JID
	handler   whatsmeow.EventHandlerWithSuccessStatus

	// receipts: the recipient's phone answers every message sent to a
	// contact with a delivery receipt, as a real one does.
	receipts bool

	connectErrs []error // returned by the next Connect calls, in order
	connects    int
	disconnects int
	// The server's side of acks (deliver): events the handler failed are
	// delivered again after the next Connect; handling counts deliveries
	// under way, idle signals their end.
	unacked  []any
	handling int
	idle     *sync.Cond
	pairing  string   // Pairing's answer once paired
	qrCodes  []string // emitted on Connect of an unpaired device

	sent        []fakeSend
	sendErr     error
	peer        []*waE2E.Message
	uploads     [][]byte
	uploadTypes []whatsmeow.MediaType
	appState    []appstate.PatchInfo
	reads       []fakeRead
	vote        *waE2E.PollVoteMessage
	download    []byte
	// cdn is the network's media CDN by direct path (nil: every download
	// answers download); retryPaths, by message id, the path a media retry's
	// upload goes to (absent: the phone never answers); retryAsks the retries asked.
	cdn        map[string][]byte
	retryPaths map[types.MessageID]string
	retryAsks  []types.MessageID
	presence   []string // "<chat> <state>[ <media>]" of each SendChatPresence
	// pushName is the account's push name (whatsmeow's Store.PushName): without
	// it SendPresence fails as whatsmeow's does; own the presences sent.
	pushName    string
	ownPres     []types.Presence
	retrySource func(requester, to types.JID, id types.MessageID) *waE2E.Message

	groups       map[types.JID]*types.GroupInfo
	created      []whatsmeow.ReqCreateGroup
	participants []fakeParticipants
	groupCalls   []string
	groupErr     error
	partResult   map[types.JID]int // participant -> error code of the next participant change
	inviteResets map[types.JID]int // group -> how often its invite code was reset
	requests     map[types.JID][]types.GroupParticipantRequest

	pairPhone   string
	pairClient  whatsmeow.PairClientType
	pairDisplay string
	loggedOut   bool

	notOnWA  map[string]bool // phone numbers ("+digits") not on the network
	onWAAsks [][]string

	profile fakeProfile // the account's about and picture, the calls rejected (fake_profile_test.go)
	onWAAt  []time.Time // when each IsOnWhatsApp query went
	// business names numbers ("+digits") that are businesses, by verified name.
	business map[string]string
	// blocked is the block list as whatsmeow's server keeps it: by LID when
	// the store knows the number's LID (UpdateBlocklist resolves it).
	blocked     []types.JID
	blockCalls  []string        // "<action> <jid as given>"
	timerCalls  []fakeTimerCall // SetDisappearingTimer's calls (fake_groups_test.go)
	profiles    fakeProfiles    // contact details (contactdetails_test.go)
	newsletters fakeNewsletters // followed newsletters (fake_newsletters_test.go)
}

type fakeSend struct {
	to    types.JID
	msg   *waE2E.Message
	extra []whatsmeow.SendRequestExtra
	// wire is where whatsmeow sends it on the network: a direct message to a
	// phone number goes to its LID when the store knows it.
	wire types.JID
}

type fakeRead struct {
	ids    []types.MessageID
	chat   types.JID
	sender types.JID
}

type fakeParticipants struct {
	group  types.JID
	who    []types.JID
	action whatsmeow.ParticipantChange
}

func newFake(paired bool) *fakeClient {
	f := &fakeClient{alt: map[types.JID]types.JID{}, notOnWA: map[string]bool{}, groups: map[types.JID]*types.GroupInfo{}, partResult: map[types.JID]int{},
		inviteResets: map[types.JID]int{}, requests: map[types.JID][]types.GroupParticipantRequest{}}
	if paired {
		f.own = types.NewADJID("15550001111", 0, 7)
		f.pushName = "Owner" // kept in the device store since the first sync
		f.lid = types.NewJID("99990001111", types.HiddenUserServer)
	}
	return f
}

// deliver hands evt to the engine as the server and whatsmeow would: an event
// the handler fails is left unacknowledged, and the server delivers it again
// after the next connection (see Connect).
func (f *fakeClient) deliver(evt any) bool {
	f.mu.Lock()
	f.handling++
	f.mu.Unlock()
	ok := f.emit(evt)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ok {
		f.unacked = append(f.unacked, evt)
	}
	f.handling--
	f.cond().Broadcast()
	return ok
}

func (f *fakeClient) cond() *sync.Cond {
	if f.idle == nil {
		f.idle = sync.NewCond(&f.mu)
	}
	return f.idle
}

// redeliver delivers again what the engine left unacknowledged, once the
// deliveries under way are over.
func (f *fakeClient) redeliver() {
	f.mu.Lock()
	for f.handling > 0 {
		f.cond().Wait()
	}
	again := f.unacked
	f.unacked = nil
	f.mu.Unlock()
	for _, evt := range again {
		f.deliver(evt)
	}
}

// emit hands evt to the engine as whatsmeow would.
func (f *fakeClient) emit(evt any) bool {
	f.mu.Lock()
	h := f.handler
	f.mu.Unlock()
	return h(evt)
}

func (f *fakeClient) Connect() error {
	f.mu.Lock()
	f.connects++
	if len(f.connectErrs) > 0 {
		err := f.connectErrs[0]
		f.connectErrs = f.connectErrs[1:]
		f.mu.Unlock()
		return err
	}
	f.connected = true
	paired, codes := !f.own.IsEmpty(), f.qrCodes
	f.mu.Unlock()
	go func() {
		if paired {
			f.emit(&events.Connected{})
			f.redeliver() // the offline queue: what was not acknowledged
		} else {
			f.emit(&events.QR{Codes: codes})
		}
	}()
	return nil
}

func (f *fakeClient) Disconnect() {
	f.mu.Lock()
	f.disconnects++
	f.connected = false
	f.mu.Unlock()
}

func (f *fakeClient) IsConnected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected
}

func (f *fakeClient) IsLoggedIn() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected && !f.own.IsEmpty()
}

func (f *fakeClient) AddEventHandlerWithSuccessStatus(h whatsmeow.EventHandlerWithSuccessStatus) uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
	return 1
}

func (f *fakeClient) SendMessage(_ context.Context, to types.JID, msg *waE2E.Message, extra ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sendErr != nil {
		return whatsmeow.SendResponse{}, f.sendErr
	}
	wire := to
	if lid, ok := f.alt[to]; ok && to.Server == types.DefaultUserServer && lid.Server == types.HiddenUserServer {
		wire = lid
	}
	f.sent = append(f.sent, fakeSend{to, msg, extra, wire})
	id := types.MessageID(fmt.Sprintf("3EB0%018X", len(f.sent))) // whatsmeow's are random
	if len(extra) > 0 && extra[0].ID != "" {
		id = extra[0].ID
	}
	if f.receipts && to.Server == types.DefaultUserServer {
		go f.deliver(&events.Receipt{MessageSource: types.MessageSource{Chat: to, Sender: to}, MessageIDs: []types.MessageID{id},
			Timestamp: time.Now(), Type: types.ReceiptTypeDelivered})
	}
	return whatsmeow.SendResponse{ID: id, Timestamp: time.Unix(1_800_000_000, 0)}, nil
}

func (f *fakeClient) SendPeerMessage(_ context.Context, msg *waE2E.Message) (whatsmeow.SendResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.peer = append(f.peer, msg)
	return whatsmeow.SendResponse{}, nil
}

// UploadReader encrypts like whatsmeow (cbcutil.EncryptStream, the ciphertext
// into tempFile, which may be the plaintext's own file) and keeps the plaintext
// it read.
func (f *fakeClient) UploadReader(_ context.Context, plaintext io.Reader, tempFile io.ReadWriteSeeker, mt whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	var seen bytes.Buffer
	key := bytes.Repeat([]byte{7}, 32)
	sum, encSum, n, _, err := cbcutil.EncryptStream(key, key[:16], key, io.TeeReader(plaintext, &seen), tempFile)
	if err != nil {
		return whatsmeow.UploadResponse{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploads = append(f.uploads, seen.Bytes())
	f.uploadTypes = append(f.uploadTypes, mt)
	return whatsmeow.UploadResponse{URL: "https://mmg.example/x", DirectPath: "/v/x", MediaKey: []byte{1},
		FileSHA256: sum, FileEncSHA256: encSum, FileLength: n}, nil
}

// DownloadToFile serves the network's CDN: the file at msg's direct path
// (cdn), 404 for any other path once cdn is set, else download.
func (f *fakeClient) DownloadToFile(_ context.Context, msg whatsmeow.DownloadableMessage, file whatsmeow.File) error {
	f.mu.Lock()
	data, ok := f.cdn[msg.GetDirectPath()]
	if !ok && f.cdn != nil {
		f.mu.Unlock()
		return fmt.Errorf("%w (path %s)", whatsmeow.ErrMediaDownloadFailedWith404, msg.GetDirectPath())
	} else if !ok {
		data = f.download
	}
	f.mu.Unlock()
	_, err := file.Write(data)
	return err
}

// SendMediaRetryReceipt records the ask; the sender's phone answers it (an
// events.MediaRetry, encrypted as the phone does) when retryPaths names the
// path it uploads the file to again, else never.
func (f *fakeClient) SendMediaRetryReceipt(_ context.Context, info *types.MessageInfo, mediaKey []byte) error {
	f.mu.Lock()
	f.retryAsks = append(f.retryAsks, info.ID)
	path, answers := f.retryPaths[info.ID]
	f.mu.Unlock()
	if !answers {
		return nil
	}
	plain, _ := proto.Marshal(&waMmsRetry.MediaRetryNotification{StanzaID: proto.String(info.ID), DirectPath: proto.String(path),
		Result: waMmsRetry.MediaRetryNotification_SUCCESS.Enum()})
	iv := []byte("twelve bytes")
	key := hkdfutil.SHA256(mediaKey, nil, []byte("WhatsApp Media Retry Notification"), 32)
	ciphertext, err := gcmutil.Encrypt(key, iv, plain, []byte(info.ID))
	if err != nil {
		return err
	}
	go f.emit(&events.MediaRetry{Ciphertext: ciphertext, IV: iv, MessageID: info.ID, ChatID: info.Chat, FromMe: info.IsFromMe})
	return nil
}

func (f *fakeClient) BuildPollCreation(name string, options []string, selectable int) *waE2E.Message {
	p := &waE2E.PollCreationMessage{Name: proto.String(name), SelectableOptionsCount: proto.Uint32(uint32(selectable))}
	for _, o := range options {
		p.Options = append(p.Options, &waE2E.PollCreationMessage_Option{OptionName: proto.String(o)})
	}
	return &waE2E.Message{PollCreationMessage: p}
}

func (f *fakeClient) BuildReaction(chat, sender types.JID, id types.MessageID, reaction string) *waE2E.Message {
	return (&whatsmeow.Client{}).BuildReaction(chat, sender, id, reaction)
}

func (f *fakeClient) BuildEdit(chat types.JID, id types.MessageID, content *waE2E.Message) *waE2E.Message {
	return (&whatsmeow.Client{}).BuildEdit(chat, id, content)
}

// BuildRevoke is whatsmeow's, for a client that knows no own JID (a nil one):
// a sender given is someone else.
func (f *fakeClient) BuildRevoke(chat, sender types.JID, id types.MessageID) *waE2E.Message {
	return (*whatsmeow.Client)(nil).BuildRevoke(chat, sender, id)
}

func (f *fakeClient) BuildHistorySyncRequest(info *types.MessageInfo, count int) *waE2E.Message {
	return (&whatsmeow.Client{}).BuildHistorySyncRequest(info, count)
}

func (f *fakeClient) DecryptPollVote(context.Context, *events.Message) (*waE2E.PollVoteMessage, error) {
	if f.vote == nil {
		return nil, errors.New("no secret")
	}
	return f.vote, nil
}

func (f *fakeClient) IsOnWhatsApp(_ context.Context, phones []string) ([]types.IsOnWhatsAppResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onWAAsks = append(f.onWAAsks, phones)
	f.onWAAt = append(f.onWAAt, time.Now())
	var out []types.IsOnWhatsAppResponse
	for _, p := range phones {
		// whatsmeow asks with addressing_mode lid: a number on the network
		// answers its LID as JID (when the server has one) and its number as
		// PhoneNumber; one not on it answers its number, IsIn false.
		pn := types.NewJID(p[1:], types.DefaultUserServer)
		r := types.IsOnWhatsAppResponse{Query: p, JID: pn, PhoneNumber: pn, IsIn: !f.notOnWA[p]}
		if lid, ok := f.alt[pn]; ok && r.IsIn {
			r.JID = lid
		}
		if name, ok := f.business[p]; ok && r.IsIn {
			r.VerifiedName = &types.VerifiedName{Details: &waVnameCert.VerifiedNameCertificate_Details{VerifiedName: proto.String(name)}}
		}
		out = append(out, r)
	}
	return out, nil
}

func (f *fakeClient) MarkRead(_ context.Context, ids []types.MessageID, _ time.Time, chat, sender types.JID, _ ...types.ReceiptType) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, fakeRead{ids, chat, sender})
	return nil
}

func (f *fakeClient) SendAppState(_ context.Context, p appstate.PatchInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appState = append(f.appState, p)
	// whatsmeow fetches the app state after sending a patch; applying a push
	// name setting sets the store's push name.
	for _, m := range p.Mutations {
		if n := m.Value.GetPushNameSetting(); n != nil {
			f.pushName = n.GetName()
		}
	}
	return nil
}

func (f *fakeClient) PairPhone(_ context.Context, phone string, _ bool, ct whatsmeow.PairClientType, display string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pairPhone, f.pairClient, f.pairDisplay = phone, ct, display
	return "ABCD-EFGH", nil
}

func (f *fakeClient) Logout(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loggedOut, f.connected = true, false
	return nil
}

func (f *fakeClient) SendChatPresence(_ context.Context, jid types.JID, state types.ChatPresence, media types.ChatPresenceMedia) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := jid.String() + " " + string(state)
	if media != "" {
		p += " " + string(media)
	}
	f.presence = append(f.presence, p)
	return nil
}

func (f *fakeClient) SendPresence(_ context.Context, state types.Presence) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pushName == "" {
		return whatsmeow.ErrNoPushName
	}
	f.ownPres = append(f.ownPres, state)
	return nil
}

// ownPresence returns the presences sent so far.
func (f *fakeClient) ownPresence() []types.Presence {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]types.Presence(nil), f.ownPres...)
}

// setPushName is the phone's settings sync naming the account, as whatsmeow
// handles it: the store's push name set, then events.PushNameSetting.
func (f *fakeClient) setPushName(name string) {
	f.mu.Lock()
	f.pushName = name
	f.mu.Unlock()
	f.emit(&events.PushNameSetting{Timestamp: time.Now(), Action: &waSyncAction.PushNameSetting{Name: proto.String(name)}})
}

func (f *fakeClient) SetRetrySource(source func(requester, to types.JID, id types.MessageID) *waE2E.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retrySource = source
}

// retryReceipt is a recipient's retry receipt as whatsmeow handles it once its
// own cache of recent messages misses: the message GetMessageForRetry gives.
func (f *fakeClient) retryReceipt(requester, chat types.JID, id types.MessageID) *waE2E.Message {
	f.mu.Lock()
	source := f.retrySource
	f.mu.Unlock()
	if source == nil {
		return nil
	}
	return source(requester, chat, id)
}

func (f *fakeClient) OwnID() types.JID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.own
}

func (f *fakeClient) OwnLID() types.JID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lid
}

func (f *fakeClient) Pairing() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.own.IsEmpty() {
		return ""
	}
	if f.pairing == "" {
		return pairingName(f.own.Device, []byte("identity key of "+f.own.String()))
	}
	return f.pairing
}

func (f *fakeClient) AltJID(_ context.Context, j types.JID) (types.JID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alt[j], nil
}

// sink records events; it refuses the next fail calls.
type sink struct {
	mu   sync.Mutex
	evs  []engine.Event
	fail int
}

func (s *sink) HandleEvent(_ context.Context, ev engine.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return errors.New("database down")
	}
	s.evs = append(s.evs, ev)
	return nil
}

// take returns and forgets the recorded events.
func (s *sink) take() []engine.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.evs
	s.evs = nil
	return out
}

// harness is an engine over a fake client, reporting into a recording sink.
type harness struct {
	e    *Engine
	f    *fakeClient
	sink *sink
}

func newHarness(t testing.TB, paired bool, cfg ...func(*Config)) *harness {
	t.Helper()
	f := newFake(paired)
	s := &sink{}
	c := Config{WorkspaceID: "ws1", EngineID: "gw1", Sink: s, ReconnectMin: time.Millisecond, ReconnectMax: 5 * time.Millisecond,
		HistoryTimeout: 2 * time.Second}
	if paired {
		c.DeviceJID = f.own.String()
	}
	for _, fn := range cfg {
		fn(&c)
	}
	e := newEngine(c, f, func() (client, error) { return newFake(false), nil })
	e.retryWait = time.Millisecond
	t.Cleanup(func() { _ = e.Close() })
	h := &harness{e: e, f: f, sink: s}
	if paired {
		f.connected = true
	}
	return h
}

// waitFor polls cond until it holds or a second passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: connection refused")
}

// failingHTTP is an HTTP client that reaches nothing.
func failingHTTP() *http.Client { return &http.Client{Transport: failingTransport{}} }

// lidInfo is a direct message as a real phone in LID addressing mode sends it:
// the chat and the sender by LID, the other party's phone number in SenderAlt
// (incoming) or RecipientAlt (sent from the account's phone); alt empty when
// the network gives none.
func lidInfo(lid, alt, ownLID types.JID, id string, fromMe bool) types.MessageInfo {
	src := types.MessageSource{Chat: lid, Sender: lid, SenderAlt: alt, AddressingMode: types.AddressingModeLID}
	if fromMe {
		src = types.MessageSource{Chat: lid, Sender: ownLID, IsFromMe: true, RecipientAlt: alt, AddressingMode: types.AddressingModeLID}
	}
	return types.MessageInfo{MessageSource: src, ID: id, PushName: "Ann", Timestamp: at}
}
