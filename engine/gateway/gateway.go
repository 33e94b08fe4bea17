// Package gateway is the server-side WhatsApp engine: an engine.Engine over
// go.mau.fi/whatsmeow, linked to the account's phone as a companion device (like
// WhatsApp Web). Its device keys live in Switchboard's own database (see Store);
// what it observes on the network is reported to Switchboard through the same
// engine.Sink the sandbox reports into. The whatsmeow calls it makes sit behind a
// narrow interface (client), so tests drive the engine through a fake.
//
// See docs/gateway.md for the mapping of network events to engine events, the
// state values and how to pair a phone.
package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/mediaproc"
	"github.com/switchboardhq/switchboard/netguard"
)

// Errors of the engine. Sends that fail with them are transient (the message stays
// pending and is retried), unlike engine.ErrRejected. Each carries the API's code:
// engine_unavailable (503) for what waits on the account or the network,
// conflict (409) for a pairing asked of a paired engine, engine_timeout for a
// phone that did not answer.
var (
	// ErrNotPaired: the engine has no paired device; pair it with QR or PairPhone.
	ErrNotPaired = gatewayError(switchboard.ENOENGINE, "No phone is paired with this gateway engine yet: pair one with its QR code or a pairing code.")
	// ErrAlreadyPaired: QR or PairPhone was asked of an engine that is paired.
	ErrAlreadyPaired = gatewayError(switchboard.ECONFLICT, "A phone is paired with this gateway engine already; log it out to pair another.")
	// ErrNotConnected: the engine is not connected to the network right now.
	ErrNotConnected = gatewayError(switchboard.ENOENGINE, "The gateway engine is not connected to WhatsApp right now; it reconnects by itself.")
	// ErrBanned: the network banned the account for now (see State.BannedUntil).
	ErrBanned = gatewayError(switchboard.ENOENGINE, "WhatsApp temporarily banned the account of this gateway engine (see the engine's restriction).")
	// ErrTimelocked: the network forbids reaching out to new contacts for now
	// (see State.ReachoutTimelockedUntil).
	ErrTimelocked = gatewayError(switchboard.ENOENGINE, "WhatsApp forbids this account to message new contacts for now (see the engine's restriction).")
	// ErrClosed: the engine was closed.
	ErrClosed = gatewayError(switchboard.EDISCONNECTED, "The gateway engine was closed.")
	// ErrNoDevice: the store does not hold the device the engine was opened with
	// (it was logged out or deleted).
	ErrNoDevice = gatewayError(switchboard.ENOENGINE, "The gateway engine's device is not in the store any more (logged out or deleted): pair again.")
	// ErrUnreachable: QR or PairPhone could not connect to the network (the
	// engine keeps trying in the background; State.LastError says why).
	ErrUnreachable = gatewayError(switchboard.ENOENGINE, "The server cannot reach WhatsApp to pair the engine right now (the server log says why); it keeps trying.")
	// ErrPairingTimeout: the network sent no pairing code within QRTimeout.
	ErrPairingTimeout = gatewayError(switchboard.ETIMEOUT, "WhatsApp sent no pairing code in time; ask again.")
	// ErrPhoneTimeout: the phone did not answer an on-demand history request in time.
	ErrPhoneTimeout = gatewayError(switchboard.ETIMEOUT, "The phone did not answer the history request in time.")
)

func gatewayError(code, message string) error {
	return &switchboard.Error{Code: code, Message: message}
}

// Status is the state of a gateway's session, finer than the engine.State its
// row shows (see host.RowState).
type Status string

// Statuses of a gateway's session.
const (
	StatusUnpaired     Status = "unpaired"     // no device: waiting for QR or PairPhone
	StatusPairing      Status = "pairing"      // showing QR codes / a pairing code to the phone
	StatusConnecting   Status = "connecting"   // paired, connecting (or reconnecting with backoff)
	StatusConnected    Status = "connected"    // paired and online
	StatusDisconnected Status = "disconnected" // paired, offline; reconnecting in the background
	StatusLoggedOut    Status = "logged_out"   // the phone removed the device; pair again
	StatusBanned       Status = "banned"       // temporarily banned until State.BannedUntil
	StatusReplaced     Status = "replaced"     // another client took the session (stream replaced); retried a few times (Config.ReplacedRetry), then left until Restart
	StatusClosed       Status = "closed"       // Close was called
)

// State is what the engine knows of its session, for the management API and for
// campaigns (see Blocked).
type State struct {
	// Status is where the session is.
	Status Status `json:"status"`
	// Connected is true while the websocket is up and logged in.
	Connected bool `json:"connected"`
	// DeviceJID is the paired device's JID (keep it to reopen the engine), empty
	// before pairing and after a logout.
	DeviceJID string `json:"deviceJid,omitempty"`
	// Me is the account's own chat id (<digits>@c.us), empty before pairing.
	Me string `json:"me,omitempty"`
	// HasSynced is true once the phone sent a history sync.
	HasSynced bool `json:"hasSynced"`
	// BannedUntil is set while a temporary ban lasts; BanReason says why.
	BannedUntil *time.Time `json:"bannedUntil,omitempty"`
	BanReason   string     `json:"banReason,omitempty"`
	// ReachoutTimelockedUntil is set while the network forbids messaging new
	// contacts; ReachoutEnforcement is the network's enforcement type.
	ReachoutTimelockedUntil *time.Time `json:"reachoutTimelockedUntil,omitempty"`
	ReachoutEnforcement     string     `json:"reachoutEnforcement,omitempty"`
	// LastError is the last connection or pairing error, if any.
	LastError string `json:"lastError,omitempty"`
	// Since is when Status last changed.
	Since time.Time `json:"since"`
}

// Blocked says whether the network forbids sending now: nil when it does not,
// else ErrBanned (a temporary ban blocks every send) or ErrTimelocked (a
// reach-out time lock blocks messaging contacts the account has not talked to,
// which campaigns should treat as a pause), with until when.
func (s State) Blocked(now time.Time) (until time.Time, err error) {
	if s.BannedUntil != nil && now.Before(*s.BannedUntil) {
		return *s.BannedUntil, ErrBanned
	}
	if s.ReachoutTimelockedUntil != nil && now.Before(*s.ReachoutTimelockedUntil) {
		return *s.ReachoutTimelockedUntil, ErrTimelocked
	}
	return time.Time{}, nil
}

// MediaSource is Switchboard's media store (media.Store serves it): a reader of
// the bytes behind a URL it issued and their description, ok false for any
// other URL. The caller closes the reader.
type MediaSource interface {
	Open(ctx context.Context, rawURL string) (rc io.ReadCloser, o media.Object, ok bool, err error)
}

// Unread is an incoming message not read yet: its key and when it was sent.
type Unread struct {
	Key engine.Key
	At  time.Time
}

// Config configures an engine.
type Config struct {
	// Store is the device store. When nil, one is opened on DB with Dialect
	// (once per *sql.DB per process).
	Store   *Store
	DB      *sql.DB
	Dialect string
	// DeviceJID is the device to reopen (State.DeviceJID of an earlier run);
	// empty for a new device, paired through QR or PairPhone.
	DeviceJID string
	// WorkspaceID is the workspace the engine serves; EngineID its id (a random
	// "gateway-..." id when empty).
	WorkspaceID string
	EngineID    string
	// Sink receives what the engine observes (inbox.Inbox in Switchboard).
	Sink engine.Sink
	// Media resolves Switchboard's own media URLs without a network round trip;
	// other URLs are fetched with HTTP (netguard: no private addresses).
	Media MediaSource
	HTTP  *http.Client
	// MaxMediaBytes bounds an attachment sent as an image, video, audio or
	// sticker, MaxDocumentBytes one sent as a document (defaults
	// DefaultMaxMediaBytes and DefaultMaxDocumentBytes). Attachments are spooled
	// to temporary files, not held in memory.
	MaxMediaBytes, MaxDocumentBytes int64
	// FFmpeg locates ffmpeg and ffprobe (see mediaproc.Find): "" on PATH, "off"
	// for none, else ffmpeg's path. Without them, videos go without thumbnail,
	// dimensions and duration, and a voice note that is not Ogg/Opus is refused.
	FFmpeg string
	// PollOptions returns the options of a poll the account sent or saw, to name
	// the options of a decrypted vote (the network only carries their hashes).
	// Optional: polls seen by this process are remembered in memory.
	PollOptions func(ctx context.Context, key engine.Key) ([]string, error)
	// OldestMessage returns the oldest stored message of a chat older than before
	// (its key and time), the anchor of an on-demand history request. Optional:
	// messages seen by this process are remembered in memory.
	OldestMessage func(ctx context.Context, chatID string, before time.Time) (engine.Key, time.Time, bool, error)
	// UnreadMessages returns the incoming messages of a chat not read yet (at
	// most 100, newest first), for the read receipts of MarkRead. Optional:
	// without it the engine remembers, in this process, the incoming messages of
	// the chats it saw last (bounded).
	UnreadMessages func(ctx context.Context, chatID string) ([]Unread, error)
	// OnState is called (in its own goroutine order, never concurrently) after
	// every change of State, e.g. to persist DeviceJID after pairing.
	OnState func(State)
	// SessionEvents makes the engine report engine.EventConnected and
	// engine.EventGone through Sink on real connection changes.
	SessionEvents bool
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// DisplayName is shown on the phone for phone-code pairing ("Browser (OS)";
	// by default the Identity's: "Chrome (Switchboard)").
	DisplayName string
	// HidePresence keeps the engine from telling the network the account is
	// available once connected (see carefulClient.sendPresence).
	HidePresence bool
	// HistoryTimeout bounds the wait for an on-demand history page (default 30s).
	HistoryTimeout time.Duration
	// MediaRetryWait bounds the wait for the sender's phone to upload an expired
	// attachment again (DefaultMediaRetryWait when zero).
	MediaRetryWait time.Duration
	// CheckGap spaces one engine's number-check queries (DefaultCheckGap when zero).
	CheckGap time.Duration
	// QRTimeout bounds the wait of QR and PairPhone for the network's first
	// pairing code (default 30 s).
	QRTimeout time.Duration
	// ReconnectMin and ReconnectMax bound the backoff of the background
	// connection loop (defaults 2s and 5 min).
	ReconnectMin, ReconnectMax time.Duration
	// RedeliverMin and RedeliverMax space the reconnections that make the
	// network redeliver what the sink refused (see recovery.go; defaults
	// DefaultRedeliverMin and DefaultRedeliverMax).
	RedeliverMin, RedeliverMax time.Duration
	// ReplacedRetry is the wait before each automatic retry of a session another
	// client replaced (DefaultReplacedRetry when nil; an empty slice: none);
	// after the last the session stays replaced until Restart.
	ReplacedRetry []time.Duration
	// ReplacedStable is how long a session must have stayed connected for a
	// replacement to start the retries afresh (DefaultReplacedStable when zero).
	ReplacedStable time.Duration
	// RestartWait bounds how long Restart waits for the session to log in
	// (DefaultRestartWait when zero).
	RestartWait time.Duration
}

// Engine is one gateway session: one companion device of one WhatsApp account,
// serving one workspace. It implements engine.Engine, engine.BatchSender,
// engine.HistoryLoader, engine.ChatActor, engine.MediaFetcher, engine.MediaRefFetcher,
// engine.NewsletterCreator, engine.GroupAdmin and engine.MediaChecker.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	cl    client
	newCl func() (client, error) // a fresh client for a fresh device (after a logout)
	http  *http.Client
	proc  mediaproc.Tools // ffmpeg and ffprobe, when the server has them

	mu       sync.Mutex
	state    State
	qr       []string  // the current pairing codes
	qrAt     time.Time // when they arrived
	qrBatch  int       // counts the batches of codes
	qrWake   chan struct{}
	connWake chan struct{}
	looping  bool
	again    bool // startConnecting was called while the loop ran
	closed   bool
	failures int // connection attempts that failed, ever
	stop     chan struct{}

	stateMu sync.Mutex    // serializes OnState calls
	changed chan struct{} // closed (and renewed) at every change of State

	rec recovery // redelivery reconnections and replaced-session retries

	retryWait time.Duration // the first wait before reporting to a failing sink again

	mem     memory       // what the engine remembers of messages it saw (bounded)
	retries mediaRetries // downloads waiting for a media retry's answer
	lids    lidBook      // phone numbers of LIDs learned, to report
	calls   callBook     // the callers of recent calls, to reject them (calls.go)

	histMu   sync.Mutex
	histWait map[string][]chan historyResult // on-demand history waiters by chat

	pace checkPace // spaces the number checks' queries

	groupMu     sync.Mutex
	joined      []*types.GroupInfo
	joinedAt    time.Time
	ownReported map[string]time.Time // group changes the engine reported itself
}

var (
	_ engine.Engine            = (*Engine)(nil)
	_ engine.BatchSender       = (*Engine)(nil)
	_ engine.HistoryLoader     = (*Engine)(nil)
	_ engine.ChatActor         = (*Engine)(nil)
	_ engine.MediaFetcher      = (*Engine)(nil)
	_ engine.MediaRefFetcher   = (*Engine)(nil)
	_ engine.NewsletterCreator = (*Engine)(nil)
	_ engine.GroupAdmin        = (*Engine)(nil)
	_ engine.MediaChecker      = (*Engine)(nil)
)

var (
	storesMu sync.Mutex
	stores   = map[*sql.DB]*Store{}
)

// Open opens an engine for cfg's device and, when it is paired, starts
// connecting in the background: Open never waits for the network, and State
// reports how the connection goes. A new device (empty DeviceJID) connects when
// QR or PairPhone is first called.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Sink == nil || cfg.WorkspaceID == "" {
		return nil, errors.New("gateway: Config needs a Sink and a WorkspaceID")
	}
	st := cfg.Store
	if st == nil {
		if cfg.DB == nil {
			return nil, errors.New("gateway: Config needs a Store or a DB")
		}
		storesMu.Lock()
		st = stores[cfg.DB]
		storesMu.Unlock()
		if st == nil {
			var err error
			if st, err = OpenStore(ctx, cfg.DB, cfg.Dialect); err != nil {
				return nil, err
			}
			storesMu.Lock()
			stores[cfg.DB] = st
			storesMu.Unlock()
		}
		cfg.Store = st
	}
	if cfg.EngineID == "" {
		cfg.EngineID = "gateway-" + switchboard.RandomToken(8)
	}
	newCl := func(jid string) (client, error) {
		dev, err := st.device(ctx, jid)
		if err != nil {
			return nil, err
		}
		wc := whatsmeow.NewClient(dev, waLogger{slogOr(cfg.Logger).With("engine", cfg.EngineID)})
		wc.EnableAutoReconnect = true
		wc.AutomaticMessageRerequestFromPhone = true
		// Acknowledge a message to the server only once the sink stored what it
		// became, and keep its decrypted plaintext until then: a message the sink
		// refused is redelivered and decrypted from the buffer (the Signal ratchet
		// has moved on, so its ciphertext cannot be decrypted twice).
		wc.SynchronousAck = true
		wc.EnableDecryptedEventBuffer = true
		return waClient{wc}, nil
	}
	cl, err := newCl(cfg.DeviceJID)
	if err != nil {
		return nil, err
	}
	e := newEngine(cfg, cl, func() (client, error) { return newCl("") })
	if cl.IsLoggedIn() || cfg.DeviceJID != "" {
		e.startConnecting()
	}
	return e, nil
}

func slogOr(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// newEngine wires an engine around cl; Open and the tests call it.
func newEngine(cfg Config, cl client, newCl func() (client, error)) *Engine {
	if cfg.EngineID == "" {
		cfg.EngineID = "gateway-" + switchboard.RandomToken(8)
	}
	if cfg.DisplayName == "" {
		cfg.DisplayName = currentIdentity().displayName()
	}
	if cfg.HistoryTimeout <= 0 {
		cfg.HistoryTimeout = 30 * time.Second
	}
	if cfg.ReconnectMin <= 0 {
		cfg.ReconnectMin = 2 * time.Second
	}
	if cfg.QRTimeout <= 0 {
		cfg.QRTimeout = 30 * time.Second
	}
	if cfg.ReconnectMax <= 0 {
		cfg.ReconnectMax = 5 * time.Minute
	}
	cfg = recoveryDefaults(cfg)
	if cfg.MaxMediaBytes <= 0 {
		cfg.MaxMediaBytes = DefaultMaxMediaBytes
	}
	if cfg.MaxDocumentBytes <= 0 {
		cfg.MaxDocumentBytes = DefaultMaxDocumentBytes
	}
	h := cfg.HTTP
	if h == nil {
		// 60 s for the answer's headers; the body of a large attachment takes
		// as long as the send's context allows.
		h = netguard.Client(60*time.Second, false)
		h.Timeout = 0
	}
	e := &Engine{
		cfg: cfg, log: slogOr(cfg.Logger).With("engine", cfg.EngineID, "workspace", cfg.WorkspaceID),
		newCl: newCl, http: h, proc: mediaproc.Find(cfg.FFmpeg), retryWait: 200 * time.Millisecond,
		qrWake: make(chan struct{}), connWake: make(chan struct{}, 1), stop: make(chan struct{}),
		histWait: map[string][]chan historyResult{}, ownReported: map[string]time.Time{}, changed: make(chan struct{}),
		pace: checkPace{mu: make(chan struct{}, 1)},
	}
	e.mem.init(cfg.OldestMessage != nil, cfg.UnreadMessages != nil)
	e.attach(cl)
	status := StatusUnpaired
	if cfg.DeviceJID != "" || cl.IsLoggedIn() {
		status = StatusConnecting
	}
	e.state = State{Status: status, DeviceJID: cfg.DeviceJID, Since: time.Now()}
	if own := cl.OwnID(); !own.IsEmpty() {
		e.state.DeviceJID, e.state.Me = own.String(), chatID(own)
	}
	return e
}

// attach makes cl, made careful (see carefulClient), the engine's client and
// routes its events to the engine.
func (e *Engine) attach(cl client) {
	cl = e.careful(cl)
	e.mu.Lock()
	e.cl = cl
	e.mu.Unlock()
	cl.AddEventHandlerWithSuccessStatus(func(evt any) bool { return e.handle(cl, evt) })
}

func (e *Engine) client() client {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cl
}

// ID implements engine.Engine.
func (e *Engine) ID() string { return e.cfg.EngineID }

// Kind implements engine.Engine.
func (e *Engine) Kind() string { return engine.KindGateway }

// State returns the engine's current state.
func (e *Engine) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.snapshot()
}

func (e *Engine) snapshot() State {
	s := e.state
	if s.BannedUntil != nil {
		t := *s.BannedUntil
		s.BannedUntil = &t
	}
	if s.ReachoutTimelockedUntil != nil {
		t := *s.ReachoutTimelockedUntil
		s.ReachoutTimelockedUntil = &t
	}
	return s
}

// setState changes the state under e.mu with f and tells OnState.
func (e *Engine) setState(f func(s *State)) {
	e.mu.Lock()
	before := e.state.Status
	f(&e.state)
	if e.state.Status != before {
		e.state.Since = time.Now()
	}
	s := e.snapshot()
	e.mu.Unlock()
	if e.cfg.OnState != nil {
		e.stateMu.Lock()
		e.cfg.OnState(s)
		e.stateMu.Unlock()
	}
	// Those waiting for a change (Restart) see it once OnState recorded it.
	e.mu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// Close disconnects the engine; the device stays paired and in the store.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.stop)
	cl := e.cl
	e.mu.Unlock()
	cl.Disconnect()
	e.setState(func(s *State) { s.Status, s.Connected = StatusClosed, false })
	return nil
}

// ready is the check before a command: the engine is open, paired and online.
func (e *Engine) ready() (client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return nil, ErrClosed
	case !e.cl.IsLoggedIn() && e.cl.OwnID().IsEmpty():
		return nil, ErrNotPaired
	case !e.cl.IsConnected():
		return nil, fmt.Errorf("%w (status %s)", ErrNotConnected, e.state.Status)
	}
	if until, err := e.state.Blocked(time.Now()); errors.Is(err, ErrBanned) {
		return nil, fmt.Errorf("%w until %s", ErrBanned, until.UTC().Format(time.RFC3339))
	}
	return e.cl, nil
}

// report hands events to the sink, in order, retrying a failing sink with
// backoff for a while. It returns false when the sink did not take them: the
// network event is then not acknowledged, and the network delivers it again.
func (e *Engine) report(ctx context.Context, evs ...engine.Event) bool {
	return e.reportTries(ctx, 5, evs)
}

// reportPersist is report that keeps trying (the wait capped at 30 s) until the
// sink takes the events or the engine closes: for what the network hands over
// once and never again (a history sync: whatsmeow deletes it from the server
// after the handler ran, whatever the handler answered).
func (e *Engine) reportPersist(ctx context.Context, evs ...engine.Event) bool {
	return e.reportTries(ctx, 0, evs)
}

// deliverTries hands evs to the sink, trying up to tries times (0: no limit).
func (e *Engine) deliverTries(ctx context.Context, tries int, evs []engine.Event) bool {
	for i := range evs {
		evs[i].WorkspaceID, evs[i].EngineID = e.cfg.WorkspaceID, e.cfg.EngineID
		if evs[i].At.IsZero() {
			evs[i].At = time.Now()
		}
	}
	wait := e.retryWait
	for attempt := 1; ; attempt++ {
		err := e.deliver(ctx, evs)
		if err == nil {
			return true
		}
		if attempt == tries {
			e.log.Error("gateway: the sink refused events; the network will redeliver", "type", evs[0].Type, "err", err)
			return false
		}
		if tries == 0 && attempt%10 == 0 {
			e.log.Error("gateway: the sink keeps refusing events; still trying", "type", evs[0].Type, "attempts", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return false
		case <-e.stop:
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

func (e *Engine) deliver(ctx context.Context, evs []engine.Event) error {
	if b, ok := e.cfg.Sink.(engine.BatchSink); ok && len(evs) > 1 {
		return b.HandleEvents(ctx, evs)
	}
	for _, ev := range evs {
		if err := e.cfg.Sink.HandleEvent(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// reportNow reports events the account caused and fails if the sink refuses.
func (e *Engine) reportNow(ctx context.Context, evs ...engine.Event) error {
	if !e.report(ctx, evs...) {
		return errors.New("gateway: the action was taken but its event could not be recorded")
	}
	return nil
}
