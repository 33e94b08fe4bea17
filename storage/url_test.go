package storage

import (
	"strings"
	"testing"
)

// A PostgreSQL URL that does not parse is refused with an error that leaves its
// password out.
func TestBadPostgresURLKeepsThePassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://app:s3cretpw@db.example:notaport/switchboard",
		"postgres://app:s3cretpw@db.example:5432/switchboard?sslmode=sometimes",
		"postgresql://app:s3cretpw@[::1/switchboard",
	} {
		_, err := Open(raw)
		if err == nil {
			t.Errorf("%s: opened", raw)
			continue
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}
