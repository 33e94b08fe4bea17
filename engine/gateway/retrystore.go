package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// A recipient whose device cannot decrypt a message asks the sender to send it
// again (a retry receipt). whatsmeow answers from the last 256 messages the
// process sent, then asks Client.GetMessageForRetry; the gateway answers that
// from gateway_sent_messages, where every message the account sends through
// Switchboard is kept (the protobuf that was sent) for SentRetention, so a
// retry is answered after a restart and on whichever replica runs the session.
// (whatsmeow's own retry buffer is left off: it is pruned on every send.)

// SentRetention is how long a sent message is kept to answer retry receipts;
// older ones are pruned, pruneBatch rows at a time, every pruneEvery.
const (
	SentRetention = 14 * 24 * time.Hour
	pruneEvery    = time.Hour
	pruneBatch    = 500
)

// ownTables are the gateway's own tables beside whatsmeow's, by dialect
// ("sqlite3" or "postgres"): the sent messages and the chats' disappearing timers.
func ownTables(dialect string) []string {
	blob := "BLOB"
	if dialect == "postgres" {
		blob = "BYTEA"
	}
	return []string{
		`CREATE TABLE IF NOT EXISTS gateway_sent_messages (
			our_jid TEXT NOT NULL, chat_jid TEXT NOT NULL, message_id TEXT NOT NULL,
			message ` + blob + ` NOT NULL, sent_at BIGINT NOT NULL,
			PRIMARY KEY (our_jid, chat_jid, message_id))`,
		`CREATE INDEX IF NOT EXISTS gateway_sent_messages_sent_at ON gateway_sent_messages (sent_at)`,
		`CREATE TABLE IF NOT EXISTS gateway_chat_timers (
			our_jid TEXT NOT NULL, chat_jid TEXT NOT NULL,
			seconds BIGINT NOT NULL, set_at BIGINT NOT NULL,
			PRIMARY KEY (our_jid, chat_jid))`,
		`CREATE TABLE IF NOT EXISTS gateway_remote_devices (
			engine_id TEXT NOT NULL PRIMARY KEY, device_jid TEXT NOT NULL)`,
	}
}

// upgradeOwn creates the gateway's own tables (OpenStore calls it).
func (s *Store) upgradeOwn(ctx context.Context) error {
	for _, q := range ownTables(s.dialect) {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("gateway: create own tables: %w", err)
		}
	}
	return nil
}

// putSent keeps msg, sent by device our to chat under id, at now.
func (s *Store) putSent(ctx context.Context, our, chat, id string, msg *waE2E.Message, now time.Time) error {
	buf, err := proto.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO gateway_sent_messages (our_jid, chat_jid, message_id, message, sent_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (our_jid, chat_jid, message_id) DO UPDATE SET message = excluded.message, sent_at = excluded.sent_at`,
		our, chat, id, buf, now.Unix())
	return err
}

// sent is the message device our sent under id to one of chats; nil when the
// store holds none.
func (s *Store) sent(ctx context.Context, our, id string, chats ...string) (*waE2E.Message, error) {
	for _, chat := range chats {
		var buf []byte
		err := s.db.QueryRowContext(ctx, `SELECT message FROM gateway_sent_messages
			WHERE our_jid = $1 AND chat_jid = $2 AND message_id = $3`, our, chat, id).Scan(&buf)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return nil, err
		}
		var msg waE2E.Message
		if err := proto.Unmarshal(buf, &msg); err != nil {
			return nil, fmt.Errorf("gateway: stored message %s: %w", id, err)
		}
		return &msg, nil
	}
	return nil, nil
}

// pruneSent deletes the messages sent before cutoff, pruneBatch at a time in
// the order of the sent_at index (each page a range of the index, never a full
// scan), and returns how many it deleted.
func (s *Store) pruneSent(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		res, err := s.db.ExecContext(ctx, `DELETE FROM gateway_sent_messages
			WHERE (our_jid, chat_jid, message_id) IN (SELECT our_jid, chat_jid, message_id FROM gateway_sent_messages
				WHERE sent_at < $1 ORDER BY sent_at LIMIT $2)`, cutoff.Unix(), pruneBatch)
		if err != nil {
			return total, fmt.Errorf("gateway: prune sent messages: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// maybePrune prunes the sent messages in the background when pruneEvery has
// passed since the process last did (every engine of a process shares the Store).
func (s *Store) maybePrune(now time.Time, log func(error)) {
	s.pruneMu.Lock()
	due := now.Sub(s.pruned) >= pruneEvery
	if due {
		s.pruned = now
	}
	s.pruneMu.Unlock()
	if !due {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if _, err := s.pruneSent(ctx, now.Add(-SentRetention)); err != nil {
			log(err)
		}
	}()
}

// forgetDevice deletes the rows of device our (logged out: its messages cannot
// be retried, its chats are no longer its).
func (s *Store) forgetDevice(ctx context.Context, our string) error {
	for _, t := range []string{"gateway_sent_messages", "gateway_chat_timers"} {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM `+t+` WHERE our_jid = $1`, our); err != nil {
			return fmt.Errorf("gateway: forget device: %w", err)
		}
	}
	return nil
}

// remember keeps a message the network took, for retry receipts. A failure is
// logged, not returned: the message is sent.
func (c *carefulClient) remember(ctx context.Context, to types.JID, id types.MessageID, msg *waE2E.Message) {
	st, our := c.e.cfg.Store, c.ownJID()
	if st == nil || our == "" || id == "" {
		return
	}
	now := time.Now()
	if err := st.putSent(context.WithoutCancel(ctx), our, to.String(), string(id), msg, now); err != nil {
		c.e.log.Warn("gateway: keep sent message for retries", "id", id, "err", err)
	}
	st.maybePrune(now, func(err error) { c.e.log.Warn("gateway: prune sent messages", "err", err) })
}

// messageForRetry answers whatsmeow's GetMessageForRetry from the store: the
// message sent under id to to, or to its other address (a direct chat's phone
// number or LID, whichever the retry receipt does not name).
func (c *carefulClient) messageForRetry(requester, to types.JID, id types.MessageID) *waE2E.Message {
	st, our := c.e.cfg.Store, c.ownJID()
	if st == nil || our == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	chats := []string{to.String()}
	if alt, err := c.client.AltJID(ctx, to); err == nil && !alt.IsEmpty() {
		chats = append(chats, alt.String())
	}
	msg, err := st.sent(ctx, our, string(id), chats...)
	if err != nil {
		c.e.log.Warn("gateway: retry receipt: read sent message", "id", id, "requester", requester, "err", err)
		return nil
	}
	if msg == nil {
		c.e.log.Info("gateway: retry receipt for a message not kept", "id", id, "chat", to, "requester", requester)
	}
	return msg
}

// forgetDevice drops the store's rows of device our, being logged out.
func (c *carefulClient) forgetDevice(ctx context.Context, our string) {
	if st := c.e.cfg.Store; st != nil && our != "" {
		if err := st.forgetDevice(ctx, our); err != nil {
			c.e.log.Warn("gateway: forget logged-out device", "err", err)
		}
	}
}
