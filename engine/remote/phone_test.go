package remote_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/engine/remote"
)

// A hello's phone is a number in E.164 form; anything else closes the hello.
func TestValidPhone(t *testing.T) {
	for phone, want := range map[string]bool{
		"+15550001111": true, "+4915112345678": true, "+1234567": true,
		"15550001111": false, "+0155500011": false, "+123456": false, "+1234567890123456": false,
		"+1555000111a": false, "+1 555 000 1111": false, "": false, "+": false,
	} {
		if got := remote.ValidPhone(phone); got != want {
			t.Errorf("ValidPhone(%q) = %v, want %v", phone, got, want)
		}
	}
}
