package rest

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
)

// songBody is the body of POST /v1/music/songs.
type songBody struct {
	Lyrics         *string  `json:"lyrics"`
	Style          *string  `json:"style"`
	NegativeStyle  *string  `json:"negativeStyle"`
	VocalGender    *string  `json:"vocalGender"`
	Weirdness      *float64 `json:"weirdness"`
	StyleInfluence *float64 `json:"styleInfluence"`
	AudioInfluence *float64 `json:"audioInfluence"`
	Instrumental   *bool    `json:"instrumental"`
	Model          *string  `json:"model"`
	Title          *string  `json:"title"`
	UploadID       *string  `json:"uploadId"`
	// CaptchaToken is the reference's token for a hosted provider's captcha on
	// covers: accepted and ignored (neither provider here has a captcha).
	CaptchaToken *string `json:"captchaToken"`
}

// clipRecord is a clip as the reference renders it: the URLs and the duration
// are null until complete; the error fields appear only on an error.
type clipRecord struct {
	ID           string   `json:"id"`
	Status       string   `json:"status"`
	AudioURL     *string  `json:"audioUrl"`
	ImageURL     *string  `json:"imageUrl"`
	Title        *string  `json:"title,omitempty"`
	DurationSec  *float64 `json:"durationSec"`
	Model        *string  `json:"model,omitempty"`
	ErrorType    *string  `json:"errorType,omitempty"`
	ErrorMessage *string  `json:"errorMessage,omitempty"`
}

func newClipRecord(c *ent.MusicClip) clipRecord {
	return clipRecord{ID: c.ID, Status: c.Status, AudioURL: c.AudioURL, ImageURL: c.ImageURL, Title: c.Title,
		DurationSec: c.DurationSec, Model: c.Model, ErrorType: c.ErrorType, ErrorMessage: c.ErrorMessage}
}

// generateSong serves POST /v1/music/songs.
func (s *server) generateSong(w http.ResponseWriter, r *http.Request) error {
	var b songBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	job, err := s.mutation.GenerateSong(r.Context(), model.SongInput{
		Lyrics: b.Lyrics, Style: b.Style, NegativeStyle: b.NegativeStyle, VocalGender: b.VocalGender,
		Weirdness: b.Weirdness, StyleInfluence: b.StyleInfluence, AudioInfluence: b.AudioInfluence,
		Instrumental: b.Instrumental, Model: b.Model, Title: b.Title, UploadID: b.UploadID, CaptchaToken: b.CaptchaToken,
	})
	if err != nil {
		return err
	}
	clips := make([]clipRecord, len(job.Clips))
	for i, c := range job.Clips {
		clips[i] = newClipRecord(c)
	}
	return writeData(w, http.StatusOK, map[string]any{"jobId": job.JobID, "clips": clips})
}

// getSong serves GET /v1/music/songs/{id}.
func (s *server) getSong(w http.ResponseWriter, r *http.Request) error {
	c, err := s.query.MusicSong(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newClipRecord(c))
}

// accountRecord is the music account as the reference renders it.
type accountRecord struct {
	CreditsLeft  float64  `json:"creditsLeft"`
	MonthlyLimit *float64 `json:"monthlyLimit,omitempty"`
	MonthlyUsage *float64 `json:"monthlyUsage,omitempty"`
	Plan         string   `json:"plan,omitempty"`
}

// musicAccount serves GET /v1/music/account.
func (s *server) musicAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := s.query.MusicAccount(r.Context())
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, accountRecord(*a))
}

// uploadBody is the JSON body of POST /v1/music/uploads.
type uploadBody struct {
	AudioURL    *string `json:"audioUrl"`
	AudioBase64 *string `json:"audioBase64"`
	FileName    *string `json:"fileName"`
}

// uploadMusic serves POST /v1/music/uploads: a JSON body (audioUrl or
// audioBase64), or multipart/form-data whose file part (file or audioFile) is
// streamed to storage as it arrives, never parsed into memory or a temporary
// file first; fileName must come before the file. A JSON body over the JSON
// limit (or of unknown length) is read field by field, its audioBase64 decoded
// into storage as it arrives (see uploadMusicStream).
func (s *server) uploadMusic(w http.ResponseWriter, r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		if r.ContentLength < 0 || r.ContentLength > maxJSONBody {
			return s.uploadMusicStream(w, r)
		}
		var b uploadBody
		if err := decodeJSON(w, r, &b, false); err != nil {
			return err
		}
		return s.storeUpload(w, r, model.MusicUploadInput{AudioURL: b.AudioURL, AudioBase64: b.AudioBase64, FileName: b.FileName})
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.core.MaxMusicUpload()+maxMultipartBody) // the file, plus room for the other parts
	mr, err := r.MultipartReader()
	if err != nil {
		return invalidBody("", "invalid_multipart", "Malformed multipart/form-data body.")
	}
	var in model.MusicUploadInput
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return invalidBody("file", "invalid_type", "The multipart body has no file part (file).")
		} else if err != nil {
			return invalidBody("", "invalid_multipart", "Malformed multipart/form-data body.")
		}
		switch name := part.FormName(); name {
		case "file", "audioFile":
			in.AudioFile = &graphql.Upload{File: stream{part}, Filename: part.FileName(), ContentType: part.Header.Get("Content-Type")}
			return s.storeUpload(w, r, in)
		case "fileName", "audioUrl":
			v, err := io.ReadAll(io.LimitReader(part, 4096))
			if err != nil {
				return invalidBody(name, "invalid_multipart", "Malformed multipart/form-data body.")
			}
			str := string(v)
			if name == "fileName" {
				in.FileName = &str
			} else {
				in.AudioURL = &str
			}
		default:
			return unknownField(name, []string{"fileName", "audioUrl", "file"})
		}
	}
}

// uploadMusicStream reads a JSON upload body of any size field by field: an
// audioBase64 value is decoded into storage as it arrives, so it must be the last
// field (fileName before it); a body without one goes the ordinary way.
func (s *server) uploadMusicStream(w http.ResponseWriter, r *http.Request) error {
	if err := checkJSONType(r); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.core.MaxMusicUpload()/3*4+maxJSONBody)
	sc, err := newObjectScanner(r.Body)
	if err != nil {
		return err
	}
	var in model.MusicUploadInput
	for {
		name, ok, err := sc.next()
		if err != nil {
			return err
		}
		switch {
		case !ok:
			return s.storeUpload(w, r, in)
		case name == "fileName":
			in.FileName, err = sc.value(name)
		case name == "audioUrl":
			in.AudioURL, err = sc.value(name)
		case name == "audioBase64":
			if in.AudioURL != nil {
				return s.storeUpload(w, r, model.MusicUploadInput{AudioURL: in.AudioURL, AudioBase64: new(string)}) // two sources: the core says so
			}
			src, err := sc.stream(name)
			if err != nil {
				return err
			}
			res, err := s.core.UploadMusicStream(r.Context(), base64Stream(src, name), name, in.FileName)
			if err != nil {
				return err
			}
			if _, more, err := sc.next(); err != nil || more {
				return invalidBody("", "invalid_json", "audioBase64 must be the last field of a large JSON body.")
			}
			return writeData(w, http.StatusOK, res)
		default:
			return unknownField(name, acceptedFields(&uploadBody{}))
		}
		if err != nil {
			return err
		}
	}
}

func (s *server) storeUpload(w http.ResponseWriter, r *http.Request, in model.MusicUploadInput) error {
	res, err := s.mutation.UploadMusicAudio(r.Context(), in)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, res)
}

// stream is a multipart part as the upload's file: read once, front to back.
type stream struct{ io.Reader }

// Seek implements io.Seeker; a stream cannot seek.
func (stream) Seek(int64, int) (int64, error) {
	return 0, errors.New("rest: an upload stream cannot seek")
}
