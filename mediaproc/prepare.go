package mediaproc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// VoiceMimetype is the type WhatsApp gives a voice note.
const VoiceMimetype = "audio/ogg; codecs=opus"

// Prepared is a file ready to upload and what its message says of it.
type Prepared struct {
	// Path is the file to upload: the input, or a converted temporary file.
	Path string
	// ContentType and Kind are what goes out (a gif converted to MP4 is
	// video/mp4; a GIF that could not be converted goes out as an image).
	ContentType, Kind string
	// Width, Height and Seconds are 0 when unknown.
	Width, Height, Seconds int
	// Thumbnail is a JPEG, ThumbSize pixels on its longest side.
	Thumbnail []byte
	// Waveform is a voice note's WaveformLen levels of 0-100.
	Waveform []byte
	// Missing says what the message goes without, and why (for the log).
	Missing []string

	temp string // a converted file, removed by Close
}

// Close removes the converted file, if any.
func (p *Prepared) Close() {
	if p.temp != "" {
		removeQuietly(p.temp)
		p.temp = ""
	}
}

func (p *Prepared) miss(what string, err error) {
	p.Missing = append(p.Missing, fmt.Sprintf("%s (%v)", what, err))
}

// Prepare probes the file at path, of a media kind (image, sticker, video,
// ptv, gif, audio, voice, document) and content type, and converts it where
// WhatsApp needs another form: a voice note to Ogg/Opus, a GIF to MP4. It
// fails only when the file cannot be sent as asked: a voice note to convert
// without ffmpeg (ErrNoFFmpeg), or a voice note, video or gif ffmpeg cannot
// read (ErrInput); what it could not learn otherwise is in Missing.
func (t Tools) Prepare(ctx context.Context, kind, path, contentType string) (*Prepared, error) {
	p := &Prepared{Path: path, ContentType: contentType, Kind: kind}
	var err error
	switch kind {
	case "image", "sticker":
		t.image(ctx, p, kind == "image")
	case "video", "ptv":
		err = t.video(ctx, p)
	case "gif":
		err = t.gif(ctx, p)
	case "voice":
		err = t.voice(ctx, p)
	case "audio":
		err = t.audio(ctx, p)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// audio reads an audio file's duration: from the file for Ogg/Opus, else by
// ffprobe.
func (t Tools) audio(ctx context.Context, p *Prepared) error {
	if ok, _ := IsOggOpus(p.Path); ok {
		secs, err := OggOpusSeconds(p.Path)
		p.Seconds = seconds(secs)
		return err
	}
	pr, err := t.Probe(ctx, p.Path)
	if err != nil && ctx.Err() != nil {
		return err
	} else if err != nil {
		p.miss("duration", err)
	}
	p.Seconds = seconds(pr.Seconds)
	return nil
}

// image reads an image's dimensions and, when thumb, makes its thumbnail (in
// Go; by ffmpeg when Go cannot decode it).
func (t Tools) image(ctx context.Context, p *Prepared, thumb bool) {
	w, h, _, err := ImageSize(p.Path)
	if err != nil {
		p.miss("dimensions", err)
	}
	p.Width, p.Height = w, h
	if !thumb {
		return
	}
	if p.Thumbnail, err = ImageThumbnail(p.Path); err == nil {
		return
	}
	if !t.Available() {
		p.miss("thumbnail", err)
		return
	}
	if p.Thumbnail, err = t.FrameThumbnail(ctx, p.Path, 0); err != nil {
		p.miss("thumbnail", err)
	}
}

// video probes a video's dimensions and duration and takes its thumbnail;
// without ffmpeg it goes without them. A file ffprobe cannot read as a video
// is ErrInput: it would arrive broken.
func (t Tools) video(ctx context.Context, p *Prepared) error {
	pr, err := t.Probe(ctx, p.Path)
	switch {
	case errors.Is(err, ErrNoFFmpeg):
		p.miss("dimensions, duration and thumbnail", err)
		return nil
	case errors.Is(err, ErrInput):
		return fmt.Errorf("the video cannot be read: %w", err)
	case err != nil:
		return err
	case pr.VideoCodec == "":
		return fmt.Errorf("%w: the file has no video stream", ErrInput)
	}
	p.Width, p.Height, p.Seconds = pr.Width, pr.Height, seconds(pr.Seconds)
	if p.Thumbnail, err = t.FrameThumbnail(ctx, p.Path, thumbAt(pr.Seconds)); err != nil {
		if ctx.Err() != nil {
			return err
		}
		p.miss("thumbnail", err)
	}
	return nil
}

// gif sends a GIF image as the MP4 WhatsApp plays as a gif (as a still image
// without ffmpeg); an MP4 is a video.
func (t Tools) gif(ctx context.Context, p *Prepared) error {
	if _, _, format, err := ImageSize(p.Path); err != nil || format != "gif" {
		return t.video(ctx, p)
	}
	if !t.Available() {
		p.Kind, p.ContentType = "image", "image/gif"
		p.miss("animation: sent as a still image", ErrNoFFmpeg)
		t.image(ctx, p, true)
		return nil
	}
	out, err := t.GIFToMP4(ctx, p.Path)
	if err != nil {
		return fmt.Errorf("converting the GIF to MP4: %w", err)
	}
	p.Path, p.temp, p.ContentType = out, out, "video/mp4"
	return t.video(ctx, p)
}

// voice makes a voice note: Ogg/Opus (converted when it is not), its duration
// and its waveform.
func (t Tools) voice(ctx context.Context, p *Prepared) error {
	ok, err := IsOggOpus(p.Path)
	if err != nil {
		return err
	}
	if !ok {
		if !t.Available() {
			return fmt.Errorf("a voice note of type %s must be converted to Ogg/Opus: %w", typeName(p.ContentType), ErrNoFFmpeg)
		}
		out, err := t.ToOggOpus(ctx, p.Path)
		if err != nil {
			return fmt.Errorf("converting the voice note to Ogg/Opus: %w", err)
		}
		p.Path, p.temp = out, out
	}
	p.ContentType = VoiceMimetype
	secs, err := OggOpusSeconds(p.Path)
	if err != nil {
		return err
	}
	p.Seconds = seconds(secs)
	if p.Waveform, err = t.Waveform(ctx, p.Path); err != nil {
		if !errors.Is(err, ErrNoFFmpeg) && ctx.Err() != nil {
			return err
		}
		p.miss("waveform", err)
	}
	return nil
}

// seconds rounds a duration to whole seconds, at least 1 when there is any.
func seconds(s float64) int {
	if s <= 0 {
		return 0
	}
	return max(int(math.Round(s)), 1)
}

func typeName(ct string) string {
	if ct == "" {
		return "unknown"
	}
	return strings.ToValidUTF8(ct, "")
}
