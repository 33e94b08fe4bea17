// Package webhook is the delivery of events to customer endpoints: the event
// catalog, the envelope, Standard Webhooks signatures and one HTTP attempt.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/netguard"
)

// Status is an endpoint's state, as stored in its status column: enabled
// endpoints get deliveries, disabled ones (by hand, or after DisableAfter failed
// attempts in package delivery) do not.
type Status string

// Endpoint states.
const (
	StatusEnabled  Status = "enabled"
	StatusDisabled Status = "disabled"
)

// Event types (spec "Event catalog"): the name of every event a webhook can
// subscribe to, as stored in events and deliveries and sent as the envelope's type.
// Emit them by these names, never by a literal: a typo is a silently lost event.
const (
	// A message's status changed (messaging's status events).
	EventMessageQueued    = "message.queued"
	EventMessageSending   = "message.sending"
	EventMessageDelivered = "message.delivered"
	EventMessageRead      = "message.read"
	EventMessageFailed    = "message.failed"
	// The conversation store took in what the engine reported.
	EventNewMessageReceived    = "new_message_received_webhook"
	EventReplyToMyMessage      = "reply_to_my_message_webhook"
	EventMessageEdited         = "message_edited_webhook"
	EventMessageDeletedRevoked = "message_deleted_revoked_webhook"
	EventMessageReaction       = "message_reaction_webhook"
	EventPollVote              = "poll_vote_webhook"
	EventAckChanged            = "ack_changed_webhook"
	// A group changed.
	EventParticipantJoinedViaLink   = "participant_joined_via_link_webhook"
	EventParticipantAddedByAdmin    = "participant_added_by_admin_webhook"
	EventParticipantLeftGroup       = "participant_left_group_webhook"
	EventParticipantKickedFromGroup = "participant_kicked_from_group_webhook"
	EventGroupAdminChanged          = "group_admin_changed_webhook"
	EventGroupNameChanged           = "group_name_changed_webhook"
	EventGroupDescriptionChanged    = "group_description_changed_webhook"
	EventGroupMessagePinned         = "group_message_pinned_webhook"
	// An engine's session connected or dropped.
	EventSessionConnected    = "session.connected"
	EventSessionDisconnected = "session.disconnected"
	// An engine's account was restricted by the network (a temporary ban, a
	// reach-out time lock, a logout), or its restriction ended: Switchboard's
	// own, not the spec's (docs/events.md).
	EventSessionRestricted   = "session.restricted"
	EventSessionUnrestricted = "session.unrestricted"
	// A campaign's lifecycle.
	EventCampaignStarted   = "campaign.started"
	EventCampaignPaused    = "campaign.paused"
	EventCampaignResumed   = "campaign.resumed"
	EventCampaignCompleted = "campaign.completed"
	EventCampaignAborted   = "campaign.aborted"

	// EventChatMerged: a chat known by LID (<digits>@lid) was merged into the
	// phone-number chat of the same person once the engine learned the number;
	// data {from, to, timestamp} (docs/conversations.md, "LIDs").
	EventChatMerged = "chat.merged"

	// EventCallReceived: someone called the account; data {id, engineId,
	// from, video, group, groupId, rejected, at} (docs/calls.md).
	EventCallReceived = "call.received"
	// EventContactBlocked, EventContactUnblocked: the account's block list
	// changed on the network (on the phone, or echoed from a change made
	// through the API); data {engineId, chatId, at} (docs/contacts.md).
	EventContactBlocked   = "contact.blocked"
	EventContactUnblocked = "contact.unblocked"
	// EventContactUpdated: the network reported that a contact changed its
	// picture, about text, business name or push name; data {chatId, changed,
	// pushName, engineId, timestamp} (docs/contact-details.md).
	EventContactUpdated = "contact.updated"
	// EventGroupJoinRequest: someone asked to join a group that requires the
	// admins' approval (by its invite link); data {groupId, action
	// join_request, participants, timestamp} (docs/groups.md).
	EventGroupJoinRequest = "group.join_request"
	// EventNewsletterJoined, EventNewsletterLeft, EventNewsletterMuteChanged:
	// the account followed or unfollowed a newsletter, or muted or unmuted it
	// (through the API or on another device); data {engineId, newsletterId,
	// role, muted, at} (docs/newsletters.md).
	EventNewsletterJoined      = "newsletter.joined"
	EventNewsletterLeft        = "newsletter.left"
	EventNewsletterMuteChanged = "newsletter.mute_changed"
	// EventStatusReceived: a contact posted a status (a story), or deleted
	// one (revoked true); data is the status record (docs/status.md).
	EventStatusReceived = "status.received"
)

// Catalog is every event type a webhook can subscribe to (spec "Event catalog"),
// in the spec's order, then Switchboard's own.
var Catalog = []string{
	EventMessageQueued, EventMessageSending, EventMessageDelivered, EventMessageRead, EventMessageFailed,
	EventNewMessageReceived, EventReplyToMyMessage, EventMessageEdited,
	EventMessageDeletedRevoked, EventMessageReaction, EventPollVote, EventAckChanged,
	EventParticipantJoinedViaLink, EventParticipantAddedByAdmin, EventParticipantLeftGroup,
	EventParticipantKickedFromGroup, EventGroupAdminChanged, EventGroupNameChanged,
	EventGroupDescriptionChanged, EventGroupMessagePinned,
	EventSessionConnected, EventSessionDisconnected,
	EventCampaignStarted, EventCampaignPaused, EventCampaignResumed, EventCampaignCompleted, EventCampaignAborted,
	EventChatMerged, EventSessionRestricted, EventSessionUnrestricted,
	EventCallReceived,
	EventContactBlocked, EventContactUnblocked, EventContactUpdated,
	EventGroupJoinRequest,
	EventNewsletterJoined, EventNewsletterLeft, EventNewsletterMuteChanged,
	EventStatusReceived,
}

// InCatalog reports whether typ is a known event type.
func InCatalog(typ string) bool { return slices.Contains(Catalog, typ) }

// Envelope is the body of every delivery.
type Envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// NewSecret returns a new signing secret: "whsec_" and 24 random bytes in base64.
func NewSecret() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("webhook: crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the Standard Webhooks signature "v1,<base64 HMAC-SHA256>" of
// "<id>.<timestamp>.<body>" under secret.
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return "", fmt.Errorf("webhook: bad secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Request is one delivery attempt to make.
type Request struct {
	URL        string
	WebhookID  string
	DeliveryID string
	Payload    []byte
	// Secrets sign the request; each adds a signature (old and new during rotation).
	Secrets []string
}

// Result is what one attempt observed.
type Result struct {
	StatusCode int
	Err        string
	Latency    time.Duration
	Body       string // the first MaxResponseBody bytes of the response
}

// OK reports whether the attempt succeeded: a 2xx answer.
func (r Result) OK() bool { return r.Err == "" && r.StatusCode >= 200 && r.StatusCode < 300 }

// Limits of an attempt.
const (
	Timeout         = 10 * time.Second
	MaxResponseBody = 4 << 10
)

// Sender makes delivery attempts. Redirects are never followed, and unless private
// addresses are allowed the destination is checked again when connecting.
type Sender struct {
	client *http.Client
}

// Concurrency is how many attempts run at once in a worker; the Sender keeps as
// many idle connections to one host, so that a busy endpoint is not dialled anew
// for every attempt.
const Concurrency = 64

// NewSender returns a Sender; allowPrivate lifts the internal-address guard.
func NewSender(allowPrivate bool) *Sender {
	c := netguard.Client(Timeout, allowPrivate)
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = Concurrency
	return &Sender{client: c}
}

// Send makes one attempt.
func (s *Sender) Send(ctx context.Context, r Request) Result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Payload))
	if err != nil {
		return Result{Err: "bad url: " + switchboard.RedactText(err.Error())}
	}
	ts := start.Unix()
	id := envelopeID(r.Payload, r.DeliveryID)
	var sigs []string
	for _, secret := range r.Secrets {
		sig, err := Sign(secret, id, ts, r.Payload)
		if err != nil {
			return Result{Err: err.Error()}
		}
		sigs = append(sigs, sig)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Switchboard-Webhooks/1.0")
	req.Header.Set("Service-Webhook-Id", r.WebhookID)
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", strings.Join(sigs, " "))
	resp, err := s.client.Do(req)
	res := Result{Latency: time.Since(start)}
	if err != nil {
		res.Err = describe(err)
		return res
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	res.StatusCode, res.Body, res.Latency = resp.StatusCode, Excerpt(body), time.Since(start)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		res.Err = "redirect not followed: " + switchboard.RedactURL(resp.Header.Get("Location"))
	}
	return res
}

// envelopeID is the id of the envelope in payload, the webhook-id of every attempt:
// a redelivery carries the first delivery's envelope, id included. It falls back
// to the delivery id.
func envelopeID(payload []byte, deliveryID string) string {
	var env struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(payload, &env) == nil && env.ID != "" {
		return env.ID
	}
	return deliveryID
}

// describe is the text of a failed attempt, for the attempt log, the job log and
// the task's last error: it never holds the URL's query (a receiver's ?token=…),
// which *url.Error quotes whole.
func describe(err error) string {
	switch {
	case errors.Is(err, netguard.ErrForbiddenAddress):
		return "destination is a private address"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout after 10s"
	}
	return switchboard.RedactText(err.Error())
}

// Excerpt turns the start of a receiver's answer into text any database stores:
// valid UTF-8 (a character the cut split, or bytes that are not UTF-8, become
// U+FFFD) without NUL bytes.
func Excerpt(b []byte) string {
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "\uFFFD")
}
