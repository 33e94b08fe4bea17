package model

import (
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/ent"
)

// Group is a group chat as the API shows it: the stored chat, and its
// participants once they were read (nil until then).
type Group struct {
	Chat         *ent.Chat
	Participants []*Participant
	// Page holds the groups listed with this one, whose participants are
	// read together the first time one of them is asked for; nil for a group
	// read on its own.
	Page *GroupBatch
}

// GroupBatch is the groups of one list, whose participants are read once for
// all of them.
type GroupBatch struct {
	Groups []*Group
	Once   sync.Once
	Err    error
}

// ID is the group's id on the network.
func (g *Group) ID() string { return g.Chat.Jid }

// Name is the group's subject.
func (g *Group) Name() string { return g.Chat.Name }

// Description is the group's description.
func (g *Group) Description() string { return g.Chat.Description }

// Owner is the chat id of the group's creator.
func (g *Group) Owner() string { return g.Chat.Owner }

// CreatedAt is when the group was created.
func (g *Group) CreatedAt() time.Time { return g.Chat.CreatedAt }

// LastMessageAt is the time of the group's newest message, if any.
func (g *Group) LastMessageAt() *time.Time { return g.Chat.LastMessageAt }

// ParticipantCount is how many participants the group has.
func (g *Group) ParticipantCount() int { return g.Chat.ParticipantCount }

// Announce reports that only admins send messages.
func (g *Group) Announce() bool { return g.Chat.Announce }

// JoinApproval reports that joining by the invite link asks the admins first.
func (g *Group) JoinApproval() bool { return g.Chat.JoinApproval }

// Restrict reports that only admins edit the group's info.
func (g *Group) Restrict() bool { return g.Chat.Restrict }
