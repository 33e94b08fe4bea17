package music

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/media"
)

// Errors of storing an upload.
var (
	// ErrTooLarge is returned as soon as an upload passes its limit.
	ErrTooLarge = errors.New("music: upload too large")
	// ErrNotAudio is returned when an upload's magic bytes are no audio format's.
	ErrNotAudio = errors.New("music: not an audio file")
)

// DefaultMaxUpload bounds a reference recording unless configured otherwise: 500 MB.
const DefaultMaxUpload = 500 << 20

// FilesPrefix is the path under which Files serves finished songs and covers.
const FilesPrefix = "/music/files/"

// Files keeps music files on disk under a data directory: uploads (never
// served) in uploads/, finished audio and covers in songs/, served from
// unguessable URLs. Rows in the database hold only their metadata.
type Files struct {
	dir     string
	baseURL string
}

// NewFiles returns Files under dir, creating its folders; URLs of served files
// start with baseURL (the server's public URL).
func NewFiles(dir, baseURL string) (*Files, error) {
	for _, sub := range []string{"uploads", "songs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o750); err != nil {
			return nil, fmt.Errorf("music: data directory: %w", err)
		}
	}
	return &Files{dir: dir, baseURL: strings.TrimRight(baseURL, "/")}, nil
}

// Upload is a stored reference recording.
type Upload struct {
	Token  string
	Format string
	Size   int64
}

// PutUpload streams r into a new upload file, never holding it in memory. It
// checks the magic bytes first (ErrNotAudio) and stops reading as soon as more
// than limit bytes arrived (ErrTooLarge); a failed upload leaves no file.
func (f *Files) PutUpload(r io.Reader, limit int64) (*Upload, error) {
	head := make([]byte, SniffLen)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	format, ok := Sniff(head[:n])
	if !ok {
		return nil, ErrNotAudio
	}
	tmp, err := os.CreateTemp(filepath.Join(f.dir, "tmp"), "upload-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op once renamed
	size, err := io.Copy(tmp, io.MultiReader(bytes.NewReader(head[:n]), io.LimitReader(r, limit-int64(n)+1)))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if size > limit {
		return nil, ErrTooLarge
	}
	u := &Upload{Token: switchboard.RandomToken(20), Format: format, Size: size}
	if err := os.Rename(tmp.Name(), f.UploadPath(u.Token)); err != nil {
		return nil, err
	}
	return u, nil
}

// UploadPath is where the upload with token lives.
func (f *Files) UploadPath(token string) string {
	return filepath.Join(f.dir, "uploads", filepath.Base(token))
}

// Served file types, by extension.
var servedTypes = map[string]string{".mp3": "audio/mpeg", ".png": "image/png", ".jpg": "image/jpeg"}

// Publish stores data as a served file with extension ext (.mp3, .png or .jpg)
// and returns its URL.
func (f *Files) Publish(data []byte, ext string) (string, error) {
	if _, ok := servedTypes[ext]; !ok {
		return "", fmt.Errorf("music: cannot serve %s files", ext)
	}
	name := switchboard.RandomToken(20) + ext
	tmp, err := os.CreateTemp(filepath.Join(f.dir, "tmp"), "song-*")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(f.dir, "songs", name))
	}
	if err != nil {
		return "", err
	}
	return f.baseURL + FilesPrefix + name, nil
}

var errNoFile = switchboard.Errorf(switchboard.ENOTFOUND, "No such file.")

// ServeMedia serves GET and HEAD FilesPrefix{token}.{ext}: the token is the only
// credential, and the file goes out under the safe headers of package media
// (audio/mpeg and image/png inline). Ranges are honoured, so players can seek.
func (f *Files) ServeMedia(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimPrefix(r.URL.Path, FilesPrefix)
	ext := filepath.Ext(name)
	token := strings.TrimSuffix(name, ext)
	ct, ok := servedTypes[ext]
	if !ok || len(token) > 64 || !switchboard.IsToken(token) {
		return errNoFile
	}
	file, err := os.Open(filepath.Join(f.dir, "songs", name))
	if errors.Is(err, os.ErrNotExist) {
		return errNoFile
	} else if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}
	media.SafeHeaders(w.Header(), ct, "")
	http.ServeContent(w, r, "", st.ModTime(), file)
	return nil
}
