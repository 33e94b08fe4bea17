package boards

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
)

// Normalize is the form of a text that dedupe and similarity compare: lower case,
// letters and digits only, every run of anything else one space, trimmed. "Call
// Maria — re: invoice #42!" and "call maria re invoice 42" are the same.
func Normalize(text string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			space = false
		} else {
			space = true
		}
	}
	return b.String()
}

// Fingerprint identifies a fact for dedupe: the normalized text and the chat it
// came from (source.chat_id, case-insensitive; empty when the source is unknown).
// The message key and excerpt are provenance, not identity: the same fact read
// again in a later message of the same chat has the same fingerprint.
func Fingerprint(text, chatID string) string {
	sum := sha256.Sum256([]byte(Normalize(text) + "\x1f" + strings.ToLower(strings.TrimSpace(chatID))))
	return hex.EncodeToString(sum[:16])
}
