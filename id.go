package switchboard

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"time"
)

const tokenAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

var idEncoding = base32.NewEncoding(tokenAlphabet).WithPadding(base32.NoPadding)

// NewID returns a new identifier "<prefix>_<26 chars>": 48 bits of millisecond time
// (so ids sort by creation) followed by 80 random bits.
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	copy(b[6:], randomBytes(10))
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// RandomToken returns n random bytes encoded in lower-case base32, for secrets and
// unguessable URLs.
func RandomToken(n int) string {
	return idEncoding.EncodeToString(randomBytes(n))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("switchboard: crypto/rand failed: " + err.Error())
	}
	return b
}

// IsToken reports whether s could be a token made by RandomToken: letters of its
// alphabet only. A lookup by something else can be answered "not found" at once.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(tokenAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// HasIDPrefix reports whether id looks like an id made by NewID with prefix.
func HasIDPrefix(id, prefix string) bool {
	return strings.HasPrefix(id, prefix+"_") && len(id) == len(prefix)+1+26
}
