// Package mediaproc probes and prepares a media file for sending to WhatsApp:
// dimensions, durations, a JPEG thumbnail, a voice note's Ogg/Opus form and
// waveform. Images are handled in pure Go; video and audio need ffmpeg and
// ffprobe, run as processes (see Tools). What cannot be done without them is
// either sent without it (a video's thumbnail) or refused (a voice note that
// needs converting): never a broken file.
package mediaproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoFFmpeg is the error of what needs ffmpeg on a server without it.
var ErrNoFFmpeg = errors.New("ffmpeg is not available on this server (install it, or set SWITCHBOARD_FFMPEG to its path)")

// ErrInput marks a file ffmpeg or the image decoders cannot read: retrying the
// send cannot help.
var ErrInput = errors.New("unreadable media")

// DefaultTimeout bounds one ffmpeg or ffprobe run when Tools.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// Tools locates ffmpeg and ffprobe; the zero value has neither (images only).
type Tools struct {
	// FFmpeg and FFprobe are the programs' paths; both are needed.
	FFmpeg, FFprobe string
	// Timeout bounds one run (DefaultTimeout when zero).
	Timeout time.Duration
}

// Find locates the tools from a setting (SWITCHBOARD_FFMPEG): "" looks both up
// on PATH, "off" disables them, anything else is ffmpeg's path, with ffprobe
// beside it (or on PATH). A program that is not found leaves Tools without it.
func Find(setting string) Tools {
	switch setting {
	case "off":
		return Tools{}
	case "":
		ff, _ := exec.LookPath("ffmpeg")
		fp, _ := exec.LookPath("ffprobe")
		return Tools{FFmpeg: ff, FFprobe: fp}
	}
	var t Tools
	if p, err := exec.LookPath(setting); err == nil {
		t.FFmpeg = p
	}
	if p, err := exec.LookPath(filepath.Join(filepath.Dir(setting), "ffprobe")); err == nil {
		t.FFprobe = p
	} else if p, err := exec.LookPath("ffprobe"); err == nil {
		t.FFprobe = p
	}
	return t
}

// Available reports whether ffmpeg and ffprobe can be run.
func (t Tools) Available() bool { return t.FFmpeg != "" && t.FFprobe != "" }

// maxStderr is how much of a program's error output is kept (its tail).
const maxStderr = 2048

// tail keeps the last maxStderr bytes written to it.
type tail struct{ b []byte }

func (w *tail) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > maxStderr {
		w.b = append(w.b[:0], w.b[len(w.b)-maxStderr:]...)
	}
	return len(p), nil
}

// run runs a program with args, its output to stdout (nil: discarded). A
// failure carries the tail of its error output and is ErrInput unless the
// context ended or the program could not start.
func (t Tools) run(ctx context.Context, bin string, stdout io.Writer, args ...string) error {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var errOut tail
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = stdout, &errOut, 5*time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	name := filepath.Base(bin)
	if ctx.Err() != nil {
		return fmt.Errorf("mediaproc: %s: %w", name, context.Cause(ctx))
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("mediaproc: %s: %w", name, err)
	}
	msg := strings.TrimSpace(string(bytes.ToValidUTF8(errOut.b, nil)))
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:] // the last line says why
	}
	for _, a := range args { // the server's file names are nobody's business
		if filepath.IsAbs(a) {
			msg = strings.ReplaceAll(msg, a, "the file")
		}
	}
	return fmt.Errorf("%w: %s: %s", ErrInput, name, msg)
}

// limited is a writer that keeps up to n bytes and fails beyond them.
type limited struct {
	buf bytes.Buffer
	n   int
}

var errTooMuch = errors.New("mediaproc: output too large")

func (w *limited) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.n {
		return 0, errTooMuch
	}
	return w.buf.Write(p)
}

// tempFile is a new empty temporary file's path, named with ext.
func tempFile(ext string) (string, error) {
	f, err := os.CreateTemp("", "switchboard-media-*"+ext)
	if err != nil {
		return "", fmt.Errorf("mediaproc: %w", err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("mediaproc: %w", err)
	}
	return name, nil
}
