package auth

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/viewer"
)

// RevokedChannel is the Redis channel on which a revocation is announced, with the
// hash of the revoked key as the message, so that every replica forgets it at once.
const RevokedChannel = "switchboard:keys:revoked"

// DefaultKeyTTL is how long a verified key is remembered: short enough that a
// revocation no replica heard of is still refused within a second.
const DefaultKeyTTL = time.Second

// maxCachedKeys bounds the memory of Keys; past it the cache starts over.
const maxCachedKeys = 10_000

// Keys authenticates API keys from memory: a key verified against the database is
// remembered for a TTL, so that a busy client costs one lookup a TTL instead of one
// a request; a revocation announced on RevokedChannel is forgotten at once.
type Keys struct {
	client *ent.Client
	rdb    redis.UniversalClient
	ttl    time.Duration

	mu    sync.Mutex
	known map[string]knownKey // by key hash
}

type knownKey struct {
	viewer viewer.Viewer
	until  time.Time
}

// NewKeys returns a Keys over the database of client that remembers keys for ttl
// (DefaultKeyTTL when zero or less) and announces revocations on rdb (nil: to this
// process only).
func NewKeys(client *ent.Client, rdb redis.UniversalClient, ttl time.Duration) *Keys {
	if ttl <= 0 {
		ttl = DefaultKeyTTL
	}
	return &Keys{client: client, rdb: rdb, ttl: ttl, known: map[string]knownKey{}}
}

// Authenticate is the package's Authenticate, answered from memory when the key
// was verified within the TTL. Failures are never remembered.
func (k *Keys) Authenticate(ctx context.Context, key string) (viewer.Viewer, error) {
	if key == "" || !strings.HasPrefix(key, KeyPrefix) || len(key) > maxKeyLen {
		return Authenticate(ctx, k.client, key) // answers the right error without a lookup
	}
	return k.AuthenticateHash(ctx, Hash(key))
}

// AuthenticateHash is Authenticate for the stored form of a key (Hash).
func (k *Keys) AuthenticateHash(ctx context.Context, hash string) (viewer.Viewer, error) {
	now := time.Now()
	k.mu.Lock()
	e, ok := k.known[hash]
	k.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.viewer, nil
	}
	v, err := AuthenticateHash(ctx, k.client, hash)
	if err != nil {
		k.Forget(hash)
		return v, err
	}
	k.mu.Lock()
	if len(k.known) >= maxCachedKeys {
		clear(k.known)
	}
	k.known[hash] = knownKey{viewer: v, until: now.Add(k.ttl)}
	k.mu.Unlock()
	return v, nil
}

// Forget drops the key with hash from memory.
func (k *Keys) Forget(hash string) {
	k.mu.Lock()
	delete(k.known, hash)
	k.mu.Unlock()
}

// Revoked forgets the key with hash here and announces its revocation to every
// replica, which forget it too; a replica that misses the announcement refuses the
// key within its TTL.
func (k *Keys) Revoked(ctx context.Context, hash string) {
	k.Forget(hash)
	if k.rdb != nil {
		_ = AnnounceRevoked(ctx, k.rdb, hash) // logged there; the TTL bounds the miss
	}
}

// Listen forgets every key announced on RevokedChannel until ctx is done.
func (k *Keys) Listen(ctx context.Context, rdb redis.UniversalClient) {
	sub := rdb.Subscribe(ctx, RevokedChannel)
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			k.Forget(msg.Payload)
		}
	}
}

// AnnounceRevoked tells every replica listening on rdb that the key with hash was
// revoked.
func AnnounceRevoked(ctx context.Context, rdb redis.UniversalClient, hash string) error {
	if err := rdb.Publish(ctx, RevokedChannel, hash).Err(); err != nil {
		slog.Warn("revocation not announced; replicas refuse the key within their key TTL", "err", err)
		return err
	}
	return nil
}
