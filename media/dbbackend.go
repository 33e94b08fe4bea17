package media

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/mediachunk"
)

// ChunkSize is the length of every chunk the database backend stores but a
// file's last: 1 MiB.
const ChunkSize = 1 << 20

// DBBackend keeps bytes in the database as MediaChunk rows, written and read a
// chunk at a time. A Put under a transaction in its context (ent.NewTxContext)
// writes through that transaction.
type DBBackend struct{ client *ent.Client }

// NewDBBackend returns the database backend of client.
func NewDBBackend(client *ent.Client) *DBBackend { return &DBBackend{client: client} }

// Name is "db".
func (b *DBBackend) Name() string { return "db" }

// clientOf is the client of the transaction in ctx, if any, or b's.
func (b *DBBackend) clientOf(ctx context.Context) *ent.Client {
	if tx := ent.TxFromContext(ctx); tx != nil {
		return tx.Client()
	}
	return b.client
}

// Put stores r as chunks of ChunkSize; on an error, the chunks already written
// are deleted.
func (b *DBBackend) Put(ctx context.Context, key string, r io.Reader, _ int64) error {
	c := b.clientOf(ctx)
	buf := make([]byte, ChunkSize)
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 || seq == 0 {
			if werr := c.MediaChunk.Create().SetKey(key).SetSeq(seq).SetData(buf[:n]).Exec(ctx); werr != nil {
				return errors.Join(fmt.Errorf("media: write chunk: %w", werr), b.drop(ctx, c, key))
			}
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return nil
		case err != nil:
			return errors.Join(fmt.Errorf("media: read: %w", err), b.drop(ctx, c, key))
		}
	}
}

// drop deletes the chunks of key written by a Put that failed.
func (b *DBBackend) drop(ctx context.Context, c *ent.Client, key string) error {
	if _, err := c.MediaChunk.Delete().Where(mediachunk.Key(key)).Exec(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("media: delete partial chunks: %w", err)
	}
	return nil
}

// Open reads the chunks of key one at a time; ErrMissing if there are none.
func (b *DBBackend) Open(ctx context.Context, key string, size int64) (io.ReadSeekCloser, error) {
	r := &chunkReader{ctx: ctx, client: b.client, key: key, size: size, seq: -1}
	if err := r.load(0); err != nil {
		return nil, err
	}
	return r, nil
}

// deleteKeysPage bounds the keys of one delete statement.
const deleteKeysPage = 100

// Delete removes the chunks of keys.
func (b *DBBackend) Delete(ctx context.Context, keys ...string) error {
	c := b.clientOf(ctx)
	for len(keys) > 0 {
		page := keys[:min(len(keys), deleteKeysPage)]
		keys = keys[len(page):]
		if _, err := c.MediaChunk.Delete().Where(mediachunk.KeyIn(page...)).Exec(ctx); err != nil {
			return fmt.Errorf("media: delete chunks: %w", err)
		}
	}
	return nil
}

// chunkReader reads a file's chunks in order, holding one at a time; it seeks
// by chunk (every chunk but the last is ChunkSize long).
type chunkReader struct {
	ctx    context.Context
	client *ent.Client
	key    string
	size   int64
	off    int64
	seq    int
	chunk  []byte
}

// load makes chunk seq the current one.
func (r *chunkReader) load(seq int) error {
	if r.seq == seq {
		return nil
	}
	data, err := r.client.MediaChunk.Query().Where(mediachunk.Key(r.key), mediachunk.Seq(seq)).
		Select(mediachunk.FieldData).Only(r.ctx)
	if ent.IsNotFound(err) {
		return ErrMissing
	} else if err != nil {
		return fmt.Errorf("media: read chunk: %w", err)
	}
	r.seq, r.chunk = seq, data.Data
	return nil
}

// Read reads on from the current offset.
func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	seq := int(r.off / ChunkSize)
	if err := r.load(seq); err != nil {
		return 0, err
	}
	at := r.off - int64(seq)*ChunkSize
	if at >= int64(len(r.chunk)) {
		return 0, io.ErrUnexpectedEOF // the chunks are shorter than the row says
	}
	n := copy(p, r.chunk[at:])
	r.off += int64(n)
	return n, nil
}

// Seek moves the offset (the size is the row's).
func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	}
	if offset < 0 {
		return 0, errors.New("media: seek before the start")
	}
	r.off = offset
	return offset, nil
}

// Close lets the current chunk go.
func (r *chunkReader) Close() error {
	r.chunk = nil
	return nil
}
