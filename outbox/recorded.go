package outbox

import (
	"context"
	"sync"

	"github.com/switchboardhq/switchboard/ent"
)

// recorded holds the channels signalled when a transaction that recorded an
// event commits in this process: the fan-out loops' wake-ups. On SQLite (one
// process) they are the only wake-up; on PostgreSQL the database's
// notifications also reach the loops of other replicas.
var recorded = struct {
	sync.Mutex
	chans map[chan<- struct{}]bool
}{chans: map[chan<- struct{}]bool{}}

// OnRecorded signals ch (without blocking: a signal already pending is
// enough) whenever a transaction that recorded events commits in this process,
// until the returned function is called.
func OnRecorded(ch chan<- struct{}) (stop func()) {
	recorded.Lock()
	recorded.chans[ch] = true
	recorded.Unlock()
	return func() {
		recorded.Lock()
		delete(recorded.chans, ch)
		recorded.Unlock()
	}
}

// signalRecorded signals every channel given to OnRecorded.
func signalRecorded() {
	recorded.Lock()
	defer recorded.Unlock()
	for ch := range recorded.chans {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// signalOnCommit makes tx signal OnRecorded's channels once it commits.
func signalOnCommit(tx *ent.Tx) {
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				signalRecorded()
			}
			return err
		})
	})
}
