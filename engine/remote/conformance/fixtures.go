package conformance

import (
	"bytes"
	"image"
	"image/jpeg"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// commandOrder is the order the kit sends commands in, so that later ones can
// use what earlier ones answered (the sent message's key, the created group);
// Logout and Restart are sent by checks of their own.
var commandOrder = []string{
	"Send", "SendBatch", "Edit", "React", "Pin", "MarkRead", "SetArchived", "ShowTyping",
	"SetChatPresence", "FetchMedia", "LoadOlder", "SyncHistory",
	"CreateGroup", "UpdateGroup", "AddParticipants", "SetAdmin", "GroupInviteCode",
	"GroupInvitePreview", "JoinGroup", "GroupRequests", "AnswerGroupRequests",
	"SetGroupJoinApproval", "Community", "SetGroupPicture", "RemoveParticipant", "LeaveGroup",
	"CreateNewsletter", "FollowNewsletter", "NewsletterInfo", "MuteNewsletter",
	"NewsletterByInvite", "UnfollowNewsletter",
	"Profile", "ProfilePicture", "SetProfile", "CheckNumbers", "ContactDetails",
	"Block", "Blocklist", "Unblock", "DisappearingTimer", "SetDisappearingTimer",
	"RejectCall", "PostStatus", "RevokeStatus", "PairingQR", "PairingCode", "Revoke",
}

// learned is what earlier commands answered, for the params of later ones.
type learned struct {
	key        engine.Key // the message Send sent
	group      string     // the group CreateGroup made
	newsletter string
	status     string // the id of the status PostStatus posted
}

// Fallback ids for commands whose subject an earlier command did not give.
const (
	someGroup      = "120363000000000001@g.us"
	someNewsletter = "120363000000000002@newsletter"
	someInvite     = "AbCdEfGh1234567890IjKl"
)

// sendWireID is the wire id of the kit's Send: sent twice, it must give the
// same key.
var sendWireID = engine.WireID("conformance-send")

// params are the params the kit sends method with.
func (k *kit) params(method string, l *learned) []any {
	peer := jidOf(k.o.To)
	digits := strings.TrimPrefix(k.o.To, "+") // numbers travel as E.164 digits without "+"
	group := or(l.group, someGroup)
	newsletter := or(l.newsletter, someNewsletter)
	key := l.key
	if key.ID == "" {
		key = engine.Key{FromMe: true, Remote: peer, ID: engine.WireID("conformance-none")}
	}
	text := func(wire, s string) engine.Outgoing {
		return engine.Outgoing{WireID: wire, To: peer, Type: "text", Text: s}
	}
	about := "set by the conformance kit"
	name := "Conformance kit"
	switch method {
	case "Send":
		return []any{text(sendWireID, "conformance kit: Send")}
	case "SendBatch":
		return []any{[]engine.Outgoing{text(engine.WireID("conformance-batch-1"), "conformance kit: SendBatch 1"),
			text(engine.WireID("conformance-batch-2"), "conformance kit: SendBatch 2")}}
	case "Edit":
		return []any{key, "conformance kit: edited", ""}
	case "React":
		return []any{key, "👍"}
	case "Pin":
		return []any{key, (24 * time.Hour).Milliseconds()}
	case "MarkRead", "DisappearingTimer", "ContactDetails", "Block", "Unblock":
		return []any{peer}
	case "SetArchived":
		return []any{peer, false}
	case "ShowTyping":
		return []any{peer, 200}
	case "SetChatPresence":
		return []any{peer, "paused"}
	case "FetchMedia", "Revoke":
		return []any{key}
	case "LoadOlder":
		return []any{peer, time.Now().UTC().Format(time.RFC3339)}
	case "SyncHistory", "Profile", "ProfilePicture", "Blocklist", "PairingQR":
		return []any{}
	case "CreateGroup":
		return []any{name, []string{peer}}
	case "UpdateGroup":
		return []any{group, engine.GroupUpdate{Name: &name}}
	case "AddParticipants":
		return []any{group, []string{peer}}
	case "SetAdmin":
		return []any{group, peer, true}
	case "GroupInviteCode":
		return []any{group, false}
	case "GroupInvitePreview", "JoinGroup", "NewsletterByInvite":
		return []any{someInvite}
	case "GroupRequests", "Community", "LeaveGroup":
		return []any{group}
	case "AnswerGroupRequests":
		return []any{group, []string{peer}, false}
	case "SetGroupJoinApproval":
		return []any{group, false}
	case "SetGroupPicture":
		return []any{group, engine.Media{Data: tinyJPEG(), Size: int64(len(tinyJPEG())), MimeType: "image/jpeg"}}
	case "RemoveParticipant":
		return []any{group, peer}
	case "CreateNewsletter":
		return []any{name, about}
	case "FollowNewsletter", "NewsletterInfo", "UnfollowNewsletter":
		return []any{newsletter}
	case "MuteNewsletter":
		return []any{newsletter, true}
	case "SetProfile":
		return []any{engine.ProfileUpdate{About: &about}}
	case "CheckNumbers":
		return []any{[]string{digits}}
	case "SetDisappearingTimer":
		return []any{peer, 0}
	case "RejectCall":
		return []any{peer, "CONFORMANCECALL"}
	case "PostStatus":
		return []any{engine.StatusPost{WireID: engine.WireID("conformance-status"), Type: "text", Text: "conformance kit", BackgroundArgb: 0xff336699}}
	case "RevokeStatus":
		return []any{or(l.status, engine.WireID("conformance-status"))}
	case "PairingCode":
		return []any{digits}
	}
	return nil
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// tinyJPEG is a 16×16 grey JPEG: a group picture.
func tinyJPEG() []byte {
	var b bytes.Buffer
	_ = jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 16, 16)), nil)
	return b.Bytes()
}
