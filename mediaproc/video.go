package mediaproc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Probe is what ffprobe tells of a file.
type Probe struct {
	// Format is the container (ffprobe's format_name, e.g. "ogg",
	// "mov,mp4,m4a,3gp,3g2,mj2").
	Format string
	// VideoCodec and AudioCodec name the first stream of each kind ("" when none).
	VideoCodec, AudioCodec string
	// Width and Height are the first video stream's as displayed (rotation applied).
	Width, Height int
	// Seconds is the duration.
	Seconds float64
}

// ffprobe's JSON output.
type probeOut struct {
	Streams []struct {
		CodecType string `json:"codec_type"`
		CodecName string `json:"codec_name"`
		Width     int    `json:"width"`
		Height    int    `json:"height"`
		Duration  string `json:"duration"`
		Tags      struct {
			Rotate string `json:"rotate"`
		} `json:"tags"`
		SideData []struct {
			Rotation float64 `json:"rotation"`
		} `json:"side_data_list"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// Probe runs ffprobe on the file at path.
func (t Tools) Probe(ctx context.Context, path string) (Probe, error) {
	if !t.Available() {
		return Probe{}, ErrNoFFmpeg
	}
	out := &limited{n: 1 << 20}
	err := t.run(ctx, t.FFprobe, out, "-v", "error", "-print_format", "json",
		"-show_entries", "format=format_name,duration:stream=codec_type,codec_name,width,height,duration:stream_tags=rotate:stream_side_data=rotation",
		"--", path)
	if err != nil {
		return Probe{}, err
	}
	var po probeOut
	if err := json.Unmarshal(out.buf.Bytes(), &po); err != nil {
		return Probe{}, fmt.Errorf("mediaproc: ffprobe output: %w", err)
	}
	p := Probe{Format: po.Format.FormatName}
	p.Seconds, _ = strconv.ParseFloat(po.Format.Duration, 64)
	for _, s := range po.Streams {
		switch {
		case s.CodecType == "video" && p.VideoCodec == "":
			p.VideoCodec, p.Width, p.Height = s.CodecName, s.Width, s.Height
			rot, _ := strconv.ParseFloat(s.Tags.Rotate, 64)
			for _, sd := range s.SideData {
				if sd.Rotation != 0 {
					rot = sd.Rotation
				}
			}
			if r := math.Mod(math.Abs(rot), 180); r == 90 {
				p.Width, p.Height = p.Height, p.Width
			}
		case s.CodecType == "audio" && p.AudioCodec == "":
			p.AudioCodec = s.CodecName
		}
		if d, err := strconv.ParseFloat(s.Duration, 64); err == nil && p.Seconds == 0 {
			p.Seconds = d
		}
	}
	if math.IsNaN(p.Seconds) || math.IsInf(p.Seconds, 0) || p.Seconds < 0 {
		p.Seconds = 0
	}
	return p, nil
}

// FrameThumbnail is a JPEG of one frame of a video (or an image ffmpeg reads),
// ThumbSize pixels on its longest side, taken at second at.
func (t Tools) FrameThumbnail(ctx context.Context, path string, at float64) ([]byte, error) {
	if !t.Available() {
		return nil, ErrNoFFmpeg
	}
	out := &limited{n: 1 << 20}
	// Down to ThumbSize on the longest side, never enlarged.
	scale := fmt.Sprintf("scale=w='min(%d\\,iw)':h='min(%d\\,ih)':force_original_aspect_ratio=decrease", ThumbSize, ThumbSize)
	err := t.run(ctx, t.FFmpeg, out, "-nostdin", "-v", "error", "-ss", strconv.FormatFloat(at, 'f', 3, 64),
		"-i", path, "-frames:v", "1", "-vf", scale, "-q:v", "5", "-f", "mjpeg", "pipe:1")
	if err != nil {
		return nil, err
	}
	if out.buf.Len() == 0 {
		return nil, fmt.Errorf("%w: ffmpeg found no frame", ErrInput)
	}
	return out.buf.Bytes(), nil
}

// GIFToMP4 converts an animated GIF to the H.264 MP4 WhatsApp plays as a gif,
// in a new temporary file the caller removes.
func (t Tools) GIFToMP4(ctx context.Context, path string) (string, error) {
	if !t.Available() {
		return "", ErrNoFFmpeg
	}
	out, err := tempFile(".mp4")
	if err != nil {
		return "", err
	}
	err = t.run(ctx, t.FFmpeg, nil, "-nostdin", "-v", "error", "-y", "-i", path, "-an",
		"-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
		"-movflags", "+faststart", "-f", "mp4", out)
	if err != nil {
		removeQuietly(out)
		return "", err
	}
	return out, nil
}

// thumbAt is when a video's thumbnail frame is taken: one second in, or the
// middle of a shorter one.
func thumbAt(seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return math.Min(1, seconds/2)
}
