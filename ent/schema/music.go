package schema

import (
	"encoding/json"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/switchboardhq/switchboard"
)

// MusicUpload is a reference recording: its bytes are a file on disk (package
// music), the row holds its metadata.
type MusicUpload struct{ ent.Schema }

// Mixin of the MusicUpload.
func (MusicUpload) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the MusicUpload.
func (MusicUpload) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("mup") }),
		field.String("token").Immutable().Unique().Sensitive().Comment("name of the file on disk"),
		field.String("file_name").Immutable(),
		field.String("format").Immutable().Comment("mp3, wav, ogg, flac or m4a"),
		field.Int64("size").Immutable(),
		field.String("status").Default("complete"),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Annotations of the MusicUpload.
func (MusicUpload) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}

// MusicClip is one variant of a song generation: a generation (job_id) makes
// two. The provider's handle and the request let a job pick a clip up again
// after a crash; status moves to complete (audio_url, image_url) or error.
type MusicClip struct{ ent.Schema }

// Mixin of the MusicClip.
func (MusicClip) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the MusicClip.
func (MusicClip) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("mcl") }),
		field.String("job_id").Immutable(),
		field.Int("variant").Immutable(),
		field.String("provider").Immutable(),
		field.String("handle").Optional().Comment("the provider's id of the clip, once started"),
		field.String("status"),
		field.JSON("request", json.RawMessage{}).Immutable().Comment("the music.Request"),
		field.String("upload_id").Optional().Immutable(),
		field.String("title").Optional().Nillable(),
		field.Float("duration_sec").Optional().Nillable(),
		field.String("model").Optional().Nillable(),
		field.String("audio_url").Optional().Nillable(),
		field.String("image_url").Optional().Nillable(),
		field.String("error_type").Optional().Nillable(),
		field.String("error_message").Optional().Nillable(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Indexes of the MusicClip.
func (MusicClip) Indexes() []ent.Index {
	return []ent.Index{index.Fields("job_id", "variant"), index.Fields("status", "updated_at")}
}

// Annotations of the MusicClip.
func (MusicClip) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
