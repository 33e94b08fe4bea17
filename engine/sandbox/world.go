package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// The world of a workspace is its simulated account: an address book, a few
// hundred chats (contacts, groups, newsletters) with weeks of history, derived
// only from the workspace id and the anchor time, so that every process (and
// every test) sees the same world. Its size and shape:
const (
	// WorldContacts is the size of the address book; two thirds have saved names.
	WorldContacts = 180
	// WorldStrangers are people the account talked to who are not in the book.
	WorldStrangers = 40
	// WorldGroups and WorldNewsletters are the group and newsletter chats.
	WorldGroups      = 30
	WorldNewsletters = 8
	// WorldChats is the number of chats: one per contact of the book's first 160,
	// the strangers, the groups and the newsletters.
	WorldChats = 160 + WorldStrangers + WorldGroups + WorldNewsletters
	// RecentWindow is how far back the first history sync reaches; older
	// messages come with LoadOlder, HistoryPageSize at a time.
	RecentWindow    = 14 * 24 * time.Hour
	HistoryPageSize = 50
	// minSynced messages of every chat are in the first sync, however old.
	minSynced = 3
)

// world is one workspace's simulated account.
type world struct {
	seed     uint64
	anchor   time.Time
	me       string // the account's own chat id
	contacts []engine.ContactInfo
	chats    []chatSpec
	index    map[string]int // chat JID -> index in chats
}

type chatSpec struct {
	state   engine.ChatState
	count   int       // messages in its whole history
	last    time.Time // its newest message
	members []string  // who writes in it besides the account
	pinned  int       // index of a pinned message, or -1
}

var (
	firstNames = []string{"Ana", "Ben", "Carla", "Dmitri", "Elif", "Farah", "Gus", "Hana", "Ivo", "Jon", "Kemi", "Luca",
		"Maya", "Nils", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Vera", "Wes", "Xin", "Yara", "Zoe"}
	lastNames = []string{"Almeida", "Brandt", "Costa", "Dube", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jansen",
		"Kowalski", "Lopez", "Mendes", "Novak", "Okafor", "Petrov", "Rossi", "Silva", "Tanaka", "Weber"}
	groupNames = []string{"Family", "Book club", "Climbing crew", "Project Atlas", "Neighbours", "Football Sunday",
		"Team standup", "Trip to Lisbon", "Parents of 3B", "Startup founders", "Band practice", "Flatmates"}
	newsletterNames = []string{"Daily Tech Brief", "City Events", "Recipe of the Day", "Market Watch",
		"Running Club News", "Open Source Weekly", "Travel Deals", "Science Snippets"}
	phrases = []string{"Hey! How are you?", "See you tomorrow", "Thanks a lot 🙏", "Can you send me the file?",
		"On my way", "Sounds good", "What time works for you?", "Happy birthday! 🎉", "Let me check and get back to you",
		"Did you see the news?", "Call me when you can", "Perfect, thanks", "I'll be 10 minutes late",
		"Here is the invoice https://example.com/invoice", "Meeting moved to 3pm", "Lunch today?", "Great job everyone",
		"Can we reschedule?", "The package arrived", "Good morning ☀️", "Where are we meeting?", "Love it ❤️"}
	reactions = []string{"👍", "❤️", "😂", "🙏"}
)

// worldSeed derives the seed of a workspace's world from its id.
func worldSeed(workspaceID string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(workspaceID))
	return h.Sum64()
}

// newWorld builds the world of a workspace anchored at anchor, whose account's
// own number is own (E.164; empty: one derived from the workspace).
func newWorld(workspaceID string, anchor time.Time, own string) *world {
	w := &world{seed: worldSeed(workspaceID), anchor: anchor.UTC(), index: map[string]int{}}
	rng := rand.New(rand.NewPCG(w.seed, 1))
	area := 100 + w.seed%900
	name := func() string {
		return firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))]
	}
	phone := func(i int) string { return fmt.Sprintf("1%03d555%04d@c.us", area, i+1) }
	w.me = fmt.Sprintf("1%03d5559000@c.us", area)
	if own != "" {
		w.me = strings.TrimPrefix(own, "+") + "@c.us"
	}
	for i := range WorldContacts + WorldStrangers {
		c := engine.ContactInfo{ID: phone(i), PushName: firstNames[rng.IntN(len(firstNames))], IsBusiness: rng.IntN(10) == 0}
		if i < WorldContacts && rng.IntN(3) > 0 {
			c.Name, c.Saved = name(), true
		}
		w.contacts = append(w.contacts, c)
	}
	add := func(s engine.ChatState, members []string) {
		w.index[s.ID] = len(w.chats)
		w.chats = append(w.chats, chatSpec{state: s, members: members, pinned: -1})
	}
	for i := range 160 + WorldStrangers {
		c := w.contacts[i]
		if i >= 160 {
			c = w.contacts[WorldContacts+i-160]
		}
		if hidesNumber(c.ID) { // its LID chat (lid.go); asked by number, the same chat
			w.index[c.ID] = len(w.chats)
			lid := LIDOf(c.ID)
			add(engine.ChatState{ID: lid, Kind: engine.ChatContact}, []string{lid})
			continue
		}
		add(engine.ChatState{ID: c.ID, Kind: engine.ChatContact, Name: c.Name}, []string{c.ID})
	}
	for i := range WorldGroups {
		id := fmt.Sprintf("120363%06d%03d@g.us", w.seed%1000000, i+1)
		created := w.anchor.Add(-time.Duration(90+rng.IntN(400)) * 24 * time.Hour)
		var members []string
		var parts []engine.Participant
		for _, k := range rng.Perm(WorldContacts)[:3+rng.IntN(12)] {
			members = append(members, w.contacts[k].ID)
			parts = append(parts, engine.Participant{ID: w.contacts[k].ID, IsAdmin: len(parts) < 2, IsSuperAdmin: len(parts) == 0})
		}
		// The account is a member of every group of the world, an admin of every third.
		parts = append(parts, engine.Participant{ID: w.me, IsAdmin: i%3 == 0})
		add(engine.ChatState{ID: id, Kind: engine.ChatGroup, Name: fmt.Sprintf("%s %d", groupNames[i%len(groupNames)], i/len(groupNames)+1),
			Owner: members[0], Description: "A sandbox group", CreatedAt: &created, Restrict: rng.IntN(4) == 0,
			Announce: rng.IntN(6) == 0, Participants: parts}, members)
	}
	for i := range WorldNewsletters {
		id := fmt.Sprintf("120363%06d%03d@newsletter", w.seed%1000000, 500+i)
		created := w.anchor.Add(-time.Duration(200+rng.IntN(300)) * 24 * time.Hour)
		verification := "UNVERIFIED"
		if i%3 == 0 {
			verification = "VERIFIED"
		}
		add(engine.ChatState{ID: id, Kind: engine.ChatNewsletter, Name: newsletterNames[i], CreatedAt: &created,
			Subscribers: 100 + rng.IntN(50000), Invite: fmt.Sprintf("https://chat.example.com/channel/%X", w.seed>>(i%8)),
			Verification: verification, Role: engine.NewsletterSubscriber}, nil)
	}
	for i := range w.chats {
		c := &w.chats[i]
		c.count = 8 + rng.IntN(120)
		c.last = w.anchor.Add(-time.Duration(rng.Int64N(int64(21 * 24 * time.Hour))))
		pinned, archived := i%80 == 7, rng.IntN(10) == 0 && i%80 != 7
		unread, markedUnread := 0, rng.IntN(30) == 0
		if rng.IntN(4) == 0 {
			unread = 1 + rng.IntN(12)
		}
		c.state.Pinned, c.state.Archived, c.state.MarkedUnread, c.state.UnreadCount = &pinned, &archived, &markedUnread, &unread
		if rng.IntN(6) == 0 {
			c.pinned = c.count - 1 - rng.IntN(min(c.count, 10))
		}
	}
	return w
}

// message ids encode where a message lives in the world: chat and position.
func (w *world) messageID(chat, j int) string {
	return fmt.Sprintf("SB%04X%04X%08X", chat, j, uint32(w.seed>>16)^uint32(chat*7919+j))
}

func parseMessageID(id string) (chat, j int, ok bool) {
	if len(id) != 18 || !strings.HasPrefix(id, "SB") {
		return 0, 0, false
	}
	c, err1 := strconv.ParseUint(id[2:6], 16, 32)
	m, err2 := strconv.ParseUint(id[6:10], 16, 32)
	return int(c), int(m), err1 == nil && err2 == nil
}

// messages returns the whole history of chat i, oldest first.
func (w *world) messages(i int) []engine.HistoryMessage {
	c := w.chats[i]
	rng := rand.New(rand.NewPCG(w.seed, uint64(i)+2))
	times := make([]time.Time, c.count)
	at := c.last
	for j := c.count - 1; j >= 0; j-- {
		times[j] = at
		at = at.Add(-time.Duration(10*60+rng.Int64N(30*3600)) * time.Second)
	}
	out := make([]engine.HistoryMessage, c.count)
	for j := range out {
		fromMe := c.state.Kind != engine.ChatNewsletter && rng.IntN(10) < 4
		m := engine.HistoryMessage{At: times[j].Truncate(time.Second), FromMe: fromMe, WireType: "chat"}
		m.Key = engine.Key{FromMe: fromMe, Remote: c.state.ID, ID: w.messageID(i, j)}
		switch {
		case fromMe:
			m.From, m.Ack = "me", engine.AckRead
			if j >= c.count-2 {
				m.Ack = engine.AckDevice
			}
		case c.state.Kind == engine.ChatNewsletter:
			m.From, m.SenderName = c.state.ID, c.state.Name
		default:
			m.From = c.members[rng.IntN(len(c.members))]
			m.SenderName = w.contacts[w.contactIndex(m.From)].PushName
			if c.state.Kind == engine.ChatGroup {
				m.Key.Participant = m.From
			}
		}
		roll := rng.IntN(100)
		m.Text = phrases[rng.IntN(len(phrases))]
		switch {
		case roll < 12:
			m.WireType, m.MediaKind, m.MediaMime = "image", "image", "image/png"
			m.Filename = fmt.Sprintf("IMG-%s-WA%04d.png", m.At.Format("20060102"), j)
			if rng.IntN(2) == 0 {
				m.Text = ""
			}
		case roll < 16:
			m.WireType, m.MediaKind, m.MediaMime, m.Text = "document", "document", "application/pdf", ""
			m.Filename = fmt.Sprintf("report-%d.pdf", j)
		case roll < 20:
			m.WireType, m.MediaKind, m.MediaMime, m.Text = "ptt", "voice", "audio/ogg", ""
			m.Filename = fmt.Sprintf("PTT-%04d.ogg", j)
		case roll < 23:
			m.WireType, m.MediaKind, m.MediaMime = "video", "video", "video/mp4"
			m.Filename = fmt.Sprintf("VID-%04d.mp4", j)
		case roll < 25:
			m.WireType, m.MediaKind, m.MediaMime, m.Text = "sticker", "sticker", "image/webp", ""
			m.Filename = fmt.Sprintf("sticker-%d.webp", j)
		case roll < 27:
			m.WireType, m.Text, m.Poll = "poll_creation", "Which day works best?", []string{"Monday", "Wednesday", "Friday"}
		case roll < 28:
			m.WireType, m.Text = "revoked", ""
		case roll < 38 && j > 0:
			m.QuotedKey = out[j-1-rng.IntN(min(j, 5))].Key.Serialized()
		}
		if rng.IntN(12) == 0 {
			m.Reaction = reactions[rng.IntN(len(reactions))]
		}
		if j == c.pinned {
			until := w.anchor.Add(7 * 24 * time.Hour)
			m.PinnedUntil = &until
		}
		m.Type = "text"
		if m.MediaKind != "" {
			m.Type = "media"
		}
		out[j] = m
	}
	return out
}

func (w *world) contactIndex(jid string) int {
	user, _, _ := strings.Cut(numberOf(jid), "@")
	n, _ := strconv.Atoi(user[len(user)-4:])
	return n - 1
}

// recent is chat i's first sync: its messages of the last RecentWindow (at least
// minSynced), and how far back they reach.
func (w *world) recent(i int) ([]engine.HistoryMessage, engine.Coverage) {
	all := w.messages(i)
	from := sort.Search(len(all), func(j int) bool { return !all[j].At.Before(w.anchor.Add(-RecentWindow)) })
	from = min(from, max(0, len(all)-minSynced))
	return all[from:], engine.Coverage{ChatID: w.chats[i].state.ID, OldestAt: all[from].At, Complete: from == 0}
}

// older is the page of chat i's history before before.
func (w *world) older(i int, before time.Time) ([]engine.HistoryMessage, engine.Coverage) {
	all := w.messages(i)
	end := sort.Search(len(all), func(j int) bool { return !all[j].At.Before(before) })
	start := max(0, end-HistoryPageSize)
	cov := engine.Coverage{ChatID: w.chats[i].state.ID, OldestAt: before, Complete: start == 0}
	if end > 0 {
		cov.OldestAt = all[start].At
	}
	return all[start:end], cov
}

// mediaOf returns the bytes of a world message's media, made on demand: the same
// key always gives the same bytes.
func (w *world) mediaOf(key engine.Key) (engine.Media, bool) {
	i, j, ok := parseMessageID(key.ID)
	if !ok || i >= len(w.chats) || w.chats[i].state.ID != key.Remote || j >= w.chats[i].count {
		return engine.Media{}, false
	}
	m := w.messages(i)[j]
	if m.MediaKind == "" {
		return engine.Media{}, false
	}
	return engine.Media{Data: mediaBytes(m.MediaMime, uint64(i)<<16|uint64(j)), MimeType: m.MediaMime, Filename: m.Filename}, true
}

// mediaBytes makes a small, well-formed file of the type.
func mediaBytes(mime string, n uint64) []byte {
	var b bytes.Buffer
	base, _, _ := strings.Cut(mime, ";")
	switch base {
	case "image/jpeg":
		img := image.NewRGBA(image.Rect(0, 0, 16, 16))
		for p := 0; p < len(img.Pix); p += 4 {
			img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(n), uint8(n>>8), uint8(p), 255
		}
		_ = jpeg.Encode(&b, img, nil)
	case "image/png":
		img := image.NewRGBA(image.Rect(0, 0, 16, 16))
		c := color.RGBA{uint8(n), uint8(n >> 8), uint8(n >> 16), 255}
		for p := 0; p < len(img.Pix); p += 4 {
			img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = c.R, c.G, c.B, c.A
		}
		_ = png.Encode(&b, img)
	case "application/pdf":
		fmt.Fprintf(&b, "%%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Count 0/Kids[]>>endobj\ntrailer<</Root 1 0 R>>\n%% sandbox document %d\n%%%%EOF\n", n)
	case "audio/ogg":
		b.WriteString("OggS\x00\x02")
		_ = binary.Write(&b, binary.LittleEndian, n)
		b.Write(make([]byte, 256))
	case "video/mp4":
		b.Write([]byte{0, 0, 0, 0x18})
		b.WriteString("ftypmp42\x00\x00\x00\x00mp42isom")
		_ = binary.Write(&b, binary.BigEndian, n)
	case "image/webp":
		b.WriteString("RIFF\x24\x00\x00\x00WEBPVP8 ")
		_ = binary.Write(&b, binary.LittleEndian, n)
		b.Write(make([]byte, 24))
	default:
		_ = binary.Write(&b, binary.BigEndian, n)
	}
	return b.Bytes()
}
