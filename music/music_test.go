package music

import "testing"

// Only complete and error end a clip.
func TestFinal(t *testing.T) {
	final := map[Status]bool{StatusComplete: true, StatusError: true}
	for _, s := range Statuses {
		if got := Final(s); got != final[s] {
			t.Errorf("Final(%s) = %v, want %v", s, got, final[s])
		}
	}
}
