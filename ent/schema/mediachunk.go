package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// MediaChunk is one piece (at most 1 MiB) of the bytes of media kept by the
// database backend, so that a file is written and read a chunk at a time and
// never whole in memory. It has no workspace of its own: it is reached only
// through its Media row (which has one), by a key derived from that row's
// secret token, and only by package media, under the system viewer.
type MediaChunk struct{ ent.Schema }

// Fields of the MediaChunk.
func (MediaChunk) Fields() []ent.Field {
	return []ent.Field{
		field.String("key").Immutable().NotEmpty().Sensitive().Comment("the backend key of the media (derived from its token)"),
		field.Int("seq").Immutable().NonNegative().Comment("the chunk's place in the file, from 0"),
		field.Bytes("data").Immutable(),
	}
}

// Indexes of the MediaChunk: a file's chunks are read in order by key.
func (MediaChunk) Indexes() []ent.Index {
	return []ent.Index{index.Fields("key", "seq").Unique()}
}

// Annotations of the MediaChunk.
func (MediaChunk) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
