package inbox

import (
	"context"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/chatmember"
	"github.com/switchboardhq/switchboard/ent/message"
)

// groupPin is how long a message a group member pinned stays pinned.
const groupPin = 7 * 24 * time.Hour

// storeGroupChange applies a group change to the store, idempotently: a created
// group becomes a chat with its members; participants join and leave its
// members (all of them go when the account itself leaves or is removed: it no
// longer sees the group's members); admin changes, a new subject, description
// or settings and a pinned message change what the store holds. A change of a
// group the store does not hold changes nothing. Members it adds are engineID's.
func storeGroupChange(ctx context.Context, tx *ent.Tx, g *engine.GroupChange, at time.Time, engineID string) error {
	if g.Action == engine.GroupCreated {
		if g.Chat == nil {
			return nil
		}
		return upsertChat(ctx, tx, *g.Chat, false, engineID)
	}
	held, err := tx.Chat.Query().Where(chat.Jid(g.GroupID), chat.KindEQ(chat.KindGroup)).Exist(ctx)
	if err != nil || !held {
		return err
	}
	group := tx.Chat.Update().Where(chat.Jid(g.GroupID))
	members := false
	switch g.Action {
	case "added", "joined_via_link":
		creates := make([]*ent.ChatMemberCreate, len(g.Participants))
		for i, p := range g.Participants {
			creates[i] = tx.ChatMember.Create().SetChatJid(g.GroupID).SetMemberJid(p).SetEngineID(engineID)
		}
		err := tx.ChatMember.CreateBulk(creates...).
			OnConflictColumns(chatmember.FieldWorkspaceID, chatmember.FieldChatJid, chatmember.FieldMemberJid).DoNothing().Exec(ctx)
		if err != nil && !isNoRows(err) {
			return err
		}
		members = true
	case "left", "kicked":
		gone := tx.ChatMember.Delete().Where(chatmember.ChatJid(g.GroupID))
		if g.Me == "" || !slices.Contains(g.Participants, g.Me) {
			gone.Where(chatmember.MemberJidIn(g.Participants...))
		}
		if _, err := gone.Exec(ctx); err != nil {
			return err
		}
		members = true
	case "admin_changed":
		_, err := tx.ChatMember.Update().Where(chatmember.ChatJid(g.GroupID), chatmember.MemberJidIn(g.Participants...),
			chatmember.IsSuperAdmin(false)).SetIsAdmin(g.Value != engine.AdminDemoted).Save(ctx)
		return err
	case "name_changed":
		group.SetName(g.Value)
	case "description_changed":
		group.SetDescription(g.Value)
	case engine.GroupSettingsChanged:
		group.SetNillableAnnounce(g.Announce).SetNillableRestrict(g.Restrict)
	case engine.GroupJoinApprovalChanged:
		group.SetNillableJoinApproval(g.JoinApproval)
	case "message_pinned":
		_, err := tx.Message.Update().Where(message.WaSerialized(g.Value)).SetPinnedUntil(at.Add(groupPin)).Save(ctx)
		return err
	default:
		return nil
	}
	if members {
		n, err := tx.ChatMember.Query().Where(chatmember.ChatJid(g.GroupID)).Count(ctx)
		if err != nil {
			return err
		}
		group.SetParticipantCount(n)
	}
	_, err = group.Save(ctx)
	return err
}
