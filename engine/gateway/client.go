package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// client is the narrow set of whatsmeow calls the engine makes. *whatsmeow.Client
// serves it in production (through waClient, which adds the few facts kept in its
// device store); tests drive the engine through a fake.
type client interface {
	Connect() error
	Disconnect()
	IsConnected() bool
	IsLoggedIn() bool
	AddEventHandlerWithSuccessStatus(handler whatsmeow.EventHandlerWithSuccessStatus) uint32

	SendMessage(ctx context.Context, to types.JID, message *waE2E.Message, extra ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error)
	SendPeerMessage(ctx context.Context, message *waE2E.Message) (whatsmeow.SendResponse, error)
	UploadReader(ctx context.Context, plaintext io.Reader, tempFile io.ReadWriteSeeker, appInfo whatsmeow.MediaType) (whatsmeow.UploadResponse, error)
	DownloadToFile(ctx context.Context, msg whatsmeow.DownloadableMessage, file whatsmeow.File) error
	SendMediaRetryReceipt(ctx context.Context, message *types.MessageInfo, mediaKey []byte) error
	BuildPollCreation(name string, optionNames []string, selectableOptionCount int) *waE2E.Message
	BuildReaction(chat, sender types.JID, id types.MessageID, reaction string) *waE2E.Message
	BuildEdit(chat types.JID, id types.MessageID, newContent *waE2E.Message) *waE2E.Message
	BuildRevoke(chat, sender types.JID, id types.MessageID) *waE2E.Message
	BuildHistorySyncRequest(lastKnownMessageInfo *types.MessageInfo, count int) *waE2E.Message
	DecryptPollVote(ctx context.Context, vote *events.Message) (*waE2E.PollVoteMessage, error)
	IsOnWhatsApp(ctx context.Context, phones []string) ([]types.IsOnWhatsAppResponse, error)
	GetBlocklist(ctx context.Context) (*types.Blocklist, error)
	UpdateBlocklist(ctx context.Context, jid types.JID, action events.BlocklistChangeAction) (*types.Blocklist, error)
	GetUserInfo(ctx context.Context, jids []types.JID) (map[types.JID]types.UserInfo, error)
	GetBusinessProfile(ctx context.Context, jid types.JID) (*types.BusinessProfile, error)
	GetProfilePictureInfo(ctx context.Context, jid types.JID, params *whatsmeow.GetProfilePictureParams) (*types.ProfilePictureInfo, error)
	MarkRead(ctx context.Context, ids []types.MessageID, timestamp time.Time, chat, sender types.JID, receiptTypeExtra ...types.ReceiptType) error
	SendAppState(ctx context.Context, patch appstate.PatchInfo) error

	PairPhone(ctx context.Context, phone string, showPushNotification bool, clientType whatsmeow.PairClientType, clientDisplayName string) (string, error)
	Logout(ctx context.Context) error

	GetGroupInfo(ctx context.Context, jid types.JID) (*types.GroupInfo, error)
	GetJoinedGroups(ctx context.Context) ([]*types.GroupInfo, error)
	CreateGroup(ctx context.Context, req whatsmeow.ReqCreateGroup) (*types.GroupInfo, error)
	UpdateGroupParticipants(ctx context.Context, jid types.JID, participantChanges []types.JID, action whatsmeow.ParticipantChange) ([]types.GroupParticipant, error)
	SetGroupName(ctx context.Context, jid types.JID, name string) error
	SetGroupDescription(ctx context.Context, jid types.JID, description string) error
	SetGroupAnnounce(ctx context.Context, jid types.JID, announce bool) error
	SetGroupLocked(ctx context.Context, jid types.JID, locked bool) error
	// SetGroupPhoto sets a group's picture, or the account's own with the
	// empty JID (no target).
	SetGroupPhoto(ctx context.Context, jid types.JID, avatar []byte) (string, error)
	SetStatusMessage(ctx context.Context, status types.SetStatusInput) error
	RejectCall(ctx context.Context, callFrom types.JID, callID string) error
	// SetDisappearingTimer sets a chat's disappearing-messages timer: a timer
	// setting message to a user, a group IQ to a group.
	SetDisappearingTimer(ctx context.Context, chat types.JID, timer time.Duration, settingTS time.Time) error
	LeaveGroup(ctx context.Context, jid types.JID) error
	GetGroupInviteLink(ctx context.Context, jid types.JID, reset bool) (string, error)
	GetGroupInfoFromLink(ctx context.Context, code string) (*types.GroupInfo, error)
	JoinGroupWithLink(ctx context.Context, code string) (types.JID, error)
	GetGroupRequestParticipants(ctx context.Context, jid types.JID) ([]types.GroupParticipantRequest, error)
	UpdateGroupRequestParticipants(ctx context.Context, jid types.JID, participantChanges []types.JID, action whatsmeow.ParticipantRequestChange) ([]types.GroupParticipant, error)
	SetGroupJoinApprovalMode(ctx context.Context, jid types.JID, mode bool) error
	GetSubGroups(ctx context.Context, community types.JID) ([]*types.GroupLinkTarget, error)
	CreateNewsletter(ctx context.Context, params whatsmeow.CreateNewsletterParams) (*types.NewsletterMetadata, error)
	GetNewsletterInfo(ctx context.Context, jid types.JID) (*types.NewsletterMetadata, error)
	GetNewsletterInfoWithInvite(ctx context.Context, key string) (*types.NewsletterMetadata, error)
	FollowNewsletter(ctx context.Context, jid types.JID) error
	UnfollowNewsletter(ctx context.Context, jid types.JID) error
	NewsletterToggleMute(ctx context.Context, jid types.JID, mute bool) error
	SendChatPresence(ctx context.Context, jid types.JID, state types.ChatPresence, media types.ChatPresenceMedia) error
	// SendPresence sets the account's own presence (whatsmeow.ErrNoPushName
	// before the account's push name is known).
	SendPresence(ctx context.Context, state types.Presence) error
	// SetRetrySource makes source answer the recipients' retry receipts for
	// messages whatsmeow no longer holds (whatsmeow's GetMessageForRetry).
	SetRetrySource(source func(requester, to types.JID, id types.MessageID) *waE2E.Message)

	// OwnID is the account's phone-number JID (with its device), empty before pairing.
	OwnID() types.JID
	// OwnLID is the account's LID, empty when unknown.
	OwnLID() types.JID
	// OwnPushName is the account's push name (whatsmeow's Store.PushName, kept
	// from the app state), empty before it is known.
	OwnPushName() string
	// Pairing names the device's pairing: its device number and a digest of
	// its identity key (a new device, and so new keys, at every pairing);
	// empty before pairing.
	Pairing() string
	// AltJID is the other form (LID for a phone number, phone number for a LID) of
	// a user, or the empty JID when the device store knows none.
	AltJID(ctx context.Context, jid types.JID) (types.JID, error)
}

// waClient serves client with a real *whatsmeow.Client.
type waClient struct {
	*whatsmeow.Client
}

var _ client = waClient{}

// OwnID implements client.
func (c waClient) OwnID() types.JID { return c.Store.GetJID() }

// OwnLID implements client.
func (c waClient) OwnLID() types.JID { return c.Store.GetLID() }

// OwnPushName implements client.
func (c waClient) OwnPushName() string { return c.Store.PushName }

// SetRetrySource implements client.
func (c waClient) SetRetrySource(source func(requester, to types.JID, id types.MessageID) *waE2E.Message) {
	c.GetMessageForRetry = source
}

// Pairing implements client.
func (c waClient) Pairing() string {
	own := c.Store.GetJID()
	if own.IsEmpty() || c.Store.IdentityKey == nil {
		return ""
	}
	return pairingName(own.Device, c.Store.IdentityKey.Pub[:])
}

// pairingName is "<device>.<8 hex digits of the identity key's SHA-256>".
func pairingName(device uint16, identityKey []byte) string {
	sum := sha256.Sum256(identityKey)
	return fmt.Sprintf("%d.%s", device, hex.EncodeToString(sum[:4]))
}

// AltJID implements client.
func (c waClient) AltJID(ctx context.Context, jid types.JID) (types.JID, error) {
	return c.Store.GetAltJID(ctx, jid)
}
