//go:build mediabench

package gateway

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"sync"

	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/cbcutil"
	"google.golang.org/protobuf/proto"
)

// This file is built only with -tags mediabench, for bench/media: an engine on
// a simulated network that does what whatsmeow does with an upload on this
// side of the wire (AES-CBC and HMAC of the plaintext into the scratch file,
// then the ciphertext read back to the network), so that the memory the
// benchmark measures is that of a real send.

// benchNet is the simulated network: a paired, connected account whose
// recipients are all on WhatsApp. The calls a send does not make are left to
// the nil embedded interface.
type benchNet struct {
	client
	mu   sync.Mutex
	sent []*waE2E.Message
	// cdn holds the one file the network serves (OpenBenchReceiver), encrypted
	// as the network holds it: the ciphertext and its 10-byte MAC, with key.
	cdn    *os.File
	cdnLen int64
	key    []byte
}

func (*benchNet) Connect() error    { return nil }
func (*benchNet) Disconnect()       {}
func (*benchNet) IsConnected() bool { return true }
func (*benchNet) IsLoggedIn() bool  { return true }
func (*benchNet) OwnID() types.JID  { return types.NewJID("15550001111", types.DefaultUserServer) }
func (*benchNet) AddEventHandlerWithSuccessStatus(whatsmeow.EventHandlerWithSuccessStatus) uint32 {
	return 1
}

func (*benchNet) SetRetrySource(func(types.JID, types.JID, types.MessageID) *waE2E.Message) {}

func (*benchNet) IsOnWhatsApp(_ context.Context, phones []string) ([]types.IsOnWhatsAppResponse, error) {
	out := make([]types.IsOnWhatsAppResponse, len(phones))
	for i, p := range phones {
		out[i] = types.IsOnWhatsAppResponse{Query: p, IsIn: true}
	}
	return out, nil
}

func (n *benchNet) SendMessage(_ context.Context, _ types.JID, msg *waE2E.Message, extra ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent = append(n.sent, msg)
	return whatsmeow.SendResponse{ID: extra[0].ID}, nil
}

func (*benchNet) UploadReader(_ context.Context, plaintext io.Reader, tempFile io.ReadWriteSeeker, _ whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sum, encSum, n, size, err := cbcutil.EncryptStream(key, key[:16], key, plaintext, tempFile)
	if err != nil {
		return whatsmeow.UploadResponse{}, err
	}
	if _, err := tempFile.Seek(0, io.SeekStart); err != nil {
		return whatsmeow.UploadResponse{}, err
	}
	if _, err := io.CopyN(io.Discard, tempFile, int64(size)); err != nil {
		return whatsmeow.UploadResponse{}, err
	}
	return whatsmeow.UploadResponse{URL: "https://mmg.example/b", DirectPath: "/v/b", MediaKey: key,
		FileSHA256: sum, FileEncSHA256: encSum, FileLength: n}, nil
}

// OpenBenchEngine returns an engine on the simulated network, and a function
// returning the messages it sent.
func OpenBenchEngine(cfg Config) (*Engine, func() []*waE2E.Message) {
	n := &benchNet{}
	cfg.DeviceJID = n.OwnID().String()
	e := newEngine(cfg, n, nil)
	return e, func() []*waE2E.Message {
		n.mu.Lock()
		defer n.mu.Unlock()
		return append([]*waE2E.Message(nil), n.sent...)
	}
}

// DownloadToFile writes the network's file to file and decrypts it there, as
// whatsmeow does (the ciphertext without its MAC, then cbcutil.DecryptFile in
// place): never whole in memory.
func (n *benchNet) DownloadToFile(_ context.Context, _ whatsmeow.DownloadableMessage, file whatsmeow.File) error {
	if _, err := n.cdn.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyN(file, n.cdn, n.cdnLen-10); err != nil {
		return err
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return cbcutil.DecryptFile(n.key, n.key[:16], file)
}

// OpenBenchReceiver returns an engine on the simulated network whose CDN holds
// the video at path, encrypted as the network holds it (in a temporary file
// removed by the returned func), and the reference of a received video message
// that carries it (engine.MediaInfo.Ref, for FetchMediaRef).
func OpenBenchReceiver(cfg Config, path string) (*Engine, []byte, func(), error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer src.Close()
	cdn, err := os.CreateTemp("", "sb-bench-cdn-*")
	if err != nil {
		return nil, nil, nil, err
	}
	done := func() { cdn.Close(); os.Remove(cdn.Name()) }
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sum, encSum, length, size, err := cbcutil.EncryptStream(key, key[:16], key, src, cdn)
	if err != nil {
		done()
		return nil, nil, nil, fmt.Errorf("encrypt: %w", err)
	}
	n := &benchNet{cdn: cdn, cdnLen: int64(size), key: key}
	cfg.DeviceJID = n.OwnID().String()
	ref := refOf(&waE2E.VideoMessage{DirectPath: proto.String("/v/b"), MediaKey: key, FileSHA256: sum,
		FileEncSHA256: encSum, FileLength: proto.Uint64(length), Mimetype: proto.String("video/mp4")})
	return newEngine(cfg, n, nil), ref, done, nil
}
