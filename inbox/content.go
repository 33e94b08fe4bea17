package inbox

import (
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/messaging"
)

// withContent sets on a message row what in carries beyond its text: its
// media's details, the place it shares, its contact cards and an unknown
// kind's raw type. A media caption is the row's text.
func withContent(c *ent.MessageCreate, in engine.Incoming) *ent.MessageCreate {
	if md := in.Media; md != nil {
		c.SetMediaKind(md.Kind).SetMediaMime(md.MimeType).SetMediaFilename(md.Filename).SetMediaSize(md.Size).
			SetMediaSha256(md.SHA256).SetMediaWidth(md.Width).SetMediaHeight(md.Height).SetMediaSeconds(md.Seconds)
		if len(md.Ref) > 0 {
			c.SetMediaRef(md.Ref)
		}
	}
	if l := in.Location; l != nil {
		c.SetLatitude(l.Latitude).SetLongitude(l.Longitude).SetLocationName(l.Name).SetLocationAddress(l.Address)
	}
	if len(in.Contacts) > 0 {
		c.SetVcards(messaging.CardsOf(in.Contacts)).SetVcardNames(messaging.CardNamesOf(in.Contacts))
	}
	return c.SetRawType(in.RawType)
}

// storedType is the row type of a history message: poll, media, location,
// vcard, unknown, else text.
func storedType(m engine.HistoryMessage) string {
	switch {
	case m.WireType == "poll_creation":
		return "poll"
	case m.MediaKind != "" || m.Media != nil:
		return "media"
	case m.Type == engine.TypeLocation || m.Type == engine.TypeVCard || m.Type == engine.TypeUnknown:
		return m.Type
	}
	return "text"
}
