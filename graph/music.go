package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/musicclip"
	"github.com/switchboardhq/switchboard/ent/musicupload"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/music"
	"github.com/switchboardhq/switchboard/netguard"
	"github.com/switchboardhq/switchboard/storage"
)

// Bounds of a song generation, from the reference contract.
const (
	maxLyrics       = 5000
	maxStyle        = 1000
	maxSongTitle    = 200
	maxModel        = 50
	maxFileName     = 200
	defaultFileName = "audio.mp3"
	audioURLTimeout = 10 * time.Minute
)

// checkSongInput validates a generateSong input into a provider request.
func checkSongInput(in model.SongInput) (music.Request, error) {
	var p switchboard.Problems
	req := music.Request{Instrumental: in.Instrumental != nil && *in.Instrumental,
		Weirdness: in.Weirdness, StyleInfluence: in.StyleInfluence, AudioInfluence: in.AudioInfluence}
	text := func(path string, s *string, lo, hi int) string {
		if s == nil {
			if lo > 0 {
				p.Add(path, "invalid_type", "%s is required", path)
			}
			return ""
		}
		v := strings.TrimSpace(*s)
		textLen(&p, path, &v, lo, hi)
		return v
	}
	lyricsMin := 1
	if req.Instrumental {
		lyricsMin = 0
	}
	req.Lyrics = text("lyrics", in.Lyrics, lyricsMin, maxLyrics)
	req.Style = text("style", in.Style, 1, maxStyle)
	req.NegativeStyle = text("negativeStyle", in.NegativeStyle, 0, maxStyle)
	req.Title = text("title", in.Title, 0, maxSongTitle)
	req.Model = text("model", in.Model, 0, maxModel)
	if g := in.VocalGender; g != nil {
		if *g != music.VocalMale && *g != music.VocalFemale {
			p.Add("vocalGender", "invalid_enum_value", "vocalGender must be m or f, not %s", quote(*g))
		}
		req.VocalGender = *g
	}
	for name, v := range map[string]*float64{"weirdness": in.Weirdness, "styleInfluence": in.StyleInfluence, "audioInfluence": in.AudioInfluence} {
		if v != nil && !(*v >= 0 && *v <= 1) {
			p.Add(name, "too_big", "%s must be between 0 and 1 (got %v)", name, *v)
		}
	}
	return req, p.Err(switchboard.EVALIDATION)
}

// generateSong is the use case behind generateSong: the clips are stored
// (submitted) with the request, then their generation is queued. A queueing
// failure is left to the reconciler, which finds the clips in the database.
func (r *Resolver) generateSong(ctx context.Context, in model.SongInput) (*model.SongJob, error) {
	req, err := checkSongInput(in)
	if err != nil {
		return nil, err
	}
	if err := r.musicReady(); err != nil {
		return nil, err
	}
	var uploadID string
	if in.UploadID != nil {
		uploadID = *in.UploadID
		if ok, err := r.Client.MusicUpload.Query().Where(musicupload.ID(uploadID)).Exist(ctx); err != nil {
			return nil, err
		} else if !ok {
			return nil, &switchboard.Error{Code: switchboard.ENOTFOUND, Message: fmt.Sprintf("No upload with id %s.", quote(uploadID)),
				Details: []switchboard.Detail{{Path: "uploadId", Code: "not_found", Message: "unknown uploadId"}}}
		}
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	job := &model.SongJob{JobID: switchboard.NewID("mjb")}
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		for v := range music.Variants {
			c, err := tx.MusicClip.Create().SetJobID(job.JobID).SetVariant(v).SetProvider(r.Music.Name()).
				SetStatus(string(music.StatusSubmitted)).SetRequest(raw).SetUploadID(uploadID).Save(ctx)
			if err != nil {
				return err
			}
			job.Clips = append(job.Clips, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := r.Queue.GenerateMusic(ctx, viewerWorkspace(ctx), job.JobID); err != nil {
		slog.Warn("music: enqueue failed; the reconciler will queue it", "job", job.JobID, "err", err)
	}
	return job, nil
}

// musicSong is the use case behind musicSong.
func (r *Resolver) musicSong(ctx context.Context, id string) (*ent.MusicClip, error) {
	c, err := r.Client.MusicClip.Query().Where(musicclip.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No song with id %s.", quote(id))
	}
	return c, err
}

// musicClipList is the use case behind musicClipList: clips newest first.
func (r *Resolver) musicClipList(ctx context.Context, limit, skip *int) (*model.MusicClipPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	q := r.Client.MusicClip.Query()
	rows, total, err := find(ctx, q.Clone().Count, q.Order(ent.Desc(musicclip.FieldCreatedAt), ent.Asc(musicclip.FieldVariant)).Limit(l).Offset(s).All)
	if err != nil {
		return nil, err
	}
	return &model.MusicClipPage{Items: rows, Limit: l, Skip: s, Total: total}, nil
}

// musicAccount is the use case behind musicAccount.
func (r *Resolver) musicAccount(ctx context.Context) (*music.Account, error) {
	if err := r.musicReady(); err != nil {
		return nil, err
	}
	a, err := r.Music.Account(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: music provider: %v", switchboard.ErrUnavailable, err)
	}
	if a.MonthlyUsage == nil {
		// A provider that keeps no books (the local one): the month's usage is the
		// clips this workspace asked for since the month began.
		now := r.now().UTC()
		month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		n, err := r.Client.MusicClip.Query().Where(musicclip.CreatedAtGTE(month)).Count(ctx)
		if err != nil {
			return nil, err
		}
		used := float64(n)
		a.MonthlyUsage = &used
	}
	return a, nil
}

// uploadMusic is the use case behind uploadMusicAudio: exactly one source, read
// as a stream into a file (see storeUpload).
func (r *Resolver) uploadMusic(ctx context.Context, in model.MusicUploadInput) (*model.MusicUploadResult, error) {
	var p switchboard.Problems
	sources := 0
	for _, set := range []bool{in.AudioURL != nil, in.AudioBase64 != nil, in.AudioFile != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		p.Add("audioUrl", "invalid_union", "give exactly one of audioUrl, audioBase64 or a file")
	}
	fallback := defaultFileName
	if in.AudioFile != nil && in.AudioFile.Filename != "" && utf8.RuneCountInString(in.AudioFile.Filename) <= maxFileName {
		fallback = in.AudioFile.Filename
	}
	name := fileNameOf(&p, in.FileName, fallback)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	if err := r.musicReady(); err != nil {
		return nil, err
	}
	src, path, err := r.uploadSource(ctx, in, r.MaxMusicUpload())
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return r.storeUpload(ctx, src, path, name)
}

// UploadMusicStream stores a recording read from src as uploadMusicAudio does,
// for a body too large to decode at once: REST streams the audioBase64 of a large
// JSON body through it. field names where src came from, for errors; src may
// fail with an *switchboard.Error of its own (a malformed body).
func (r *Resolver) UploadMusicStream(ctx context.Context, src io.Reader, field string, fileName *string) (*model.MusicUploadResult, error) {
	// REST's stream of a large body reads fileName past the edge's check.
	if err := checkText("fileName", fileName); err != nil {
		return nil, err
	}
	var p switchboard.Problems
	name := fileNameOf(&p, fileName, defaultFileName)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	if err := r.musicReady(); err != nil {
		return nil, err
	}
	return r.storeUpload(ctx, src, field, name)
}

// fileNameOf is the checked, trimmed fileName, or fallback when none was given.
func fileNameOf(p *switchboard.Problems, fileName *string, fallback string) string {
	if fileName == nil {
		return fallback
	}
	textLen(p, "fileName", fileName, 1, maxFileName)
	return strings.TrimSpace(*fileName)
}

func (r *Resolver) musicReady() error {
	if r.Music == nil || r.MusicFiles == nil {
		return switchboard.Errorf(switchboard.EUNAVAILABLE, "Music generation is not configured on this server.")
	}
	return nil
}

// storeUpload reads src into a file (music.Files), refusing it as soon as it
// passes the limit or when its magic bytes are no audio format's; the row records
// the file. path names the field src came from.
func (r *Resolver) storeUpload(ctx context.Context, src io.Reader, path, name string) (*model.MusicUploadResult, error) {
	limit := r.MaxMusicUpload()
	up, err := r.MusicFiles.PutUpload(src, limit)
	var maxErr *http.MaxBytesError
	switch {
	case errors.Is(err, music.ErrTooLarge) || errors.As(err, &maxErr):
		return nil, switchboard.Errorf(switchboard.ETOOLARGE, "The recording exceeds %d bytes.", limit)
	case errors.Is(err, music.ErrNotAudio):
		return nil, &switchboard.Error{Code: switchboard.EVALIDATION, Message: path + " is not an MP3, WAV, OGG, FLAC or M4A recording.",
			Details: []switchboard.Detail{{Path: path, Code: "invalid_audio", Message: "not a recognized audio format"}}}
	case err != nil:
		return nil, err
	}
	row, err := r.Client.MusicUpload.Create().SetToken(up.Token).SetFileName(name).SetFormat(up.Format).
		SetSize(up.Size).SetStatus(string(music.StatusComplete)).Save(ctx) // an upload is stored whole
	if err != nil {
		return nil, err
	}
	return &model.MusicUploadResult{UploadID: row.ID, Status: row.Status}, nil
}

// MaxMusicUpload is the largest reference recording accepted, in bytes.
func (r *Resolver) MaxMusicUpload() int64 {
	if r.MusicMaxUpload <= 0 {
		return music.DefaultMaxUpload
	}
	return r.MusicMaxUpload
}

// uploadSource opens the one source of an upload as a stream, and names the field
// it came from. An audioUrl is fetched through the private-address guard.
func (r *Resolver) uploadSource(ctx context.Context, in model.MusicUploadInput, limit int64) (io.ReadCloser, string, error) {
	switch {
	case in.AudioFile != nil:
		return io.NopCloser(in.AudioFile.File), "file", nil
	case in.AudioBase64 != nil:
		data, _, err := media.DecodeBase64(*in.AudioBase64)
		if err != nil {
			return nil, "", fieldError(switchboard.EVALIDATION, "audioBase64", "invalid_string", "audioBase64 "+err.Error())
		}
		return io.NopCloser(bytes.NewReader(data)), "audioBase64", nil
	}
	raw := *in.AudioURL
	if err := netguard.CheckURL(ctx, raw, r.MediaAllowPrivate, r.MediaAllowPrivate); err != nil {
		return nil, "", fieldError(switchboard.EVALIDATION, "audioUrl", "invalid_string", "audioUrl "+err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, "", fieldError(switchboard.EVALIDATION, "audioUrl", "invalid_string", "audioUrl must be a URL")
	}
	resp, err := netguard.Client(audioURLTimeout, r.MediaAllowPrivate).Do(req)
	if err != nil {
		return nil, "", fieldError(switchboard.EVALIDATION, "audioUrl", "fetch_failed", "audioUrl could not be fetched")
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, "", fieldError(switchboard.EVALIDATION, "audioUrl", "fetch_failed", fmt.Sprintf("audioUrl answered HTTP %d", resp.StatusCode))
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, "", switchboard.Errorf(switchboard.ETOOLARGE, "The recording exceeds %d bytes.", limit)
	}
	return resp.Body, "audioUrl", nil
}

// fieldError is an error of code about the field at path.
func fieldError(code, path, issue, msg string) error {
	return &switchboard.Error{Code: code, Message: msg + ".", Details: []switchboard.Detail{{Path: path, Code: issue, Message: msg}}}
}
