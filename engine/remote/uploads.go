package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/viewer"
)

// Upload slots (docs/engine-protocol.md, "Media"): before a FetchMedia or
// ProfilePicture command to an engine that announced FeatureMediaRefs, the
// replica that asks mints a one-time URL under UploadPath and passes it as the
// command's trailing uploadUrl param; the engine PUTs the bytes there, on
// whichever replica, and replies without data. The bytes go to the media store
// (a reserved media row, filled by the PUT); the slot, in Redis, binds the
// URL's token to the engine and to that row until the command's deadline.

// UploadPath is where engines PUT the bytes of an upload slot: UploadPath +
// the slot's token.
const UploadPath = "/v1/engines/uploads/"

// uploadPrefix + a slot's token is its Redis hash: engine (the engine id it
// was minted for), url (the reserved media's URL) and, once a PUT claimed it,
// used. It expires at the command's deadline.
const uploadPrefix = "switchboard:engine-upload:"

// claimUpload claims an upload slot for the engine ARGV[1]: 1 and the media's
// URL, 0 when there is no such slot (never minted, or expired), -1 when it is
// another engine's, -2 when a PUT claimed it already.
var claimUpload = redis.NewScript(`
local e = redis.call("HGET", KEYS[1], "engine")
if not e then return {0, ""} end
if e ~= ARGV[1] then return {-1, ""} end
if redis.call("HSETNX", KEYS[1], "used", "1") == 0 then return {-2, ""} end
return {1, redis.call("HGET", KEYS[1], "url")}`)

// slot is an upload slot a replica minted for one command.
type slot struct {
	workspaceID string // whose media the reserved row is
	token       string
	url         string // where the engine PUTs: PublicURL + UploadPath + token
	mediaURL    string // the reserved media the PUT fills
}

// refs reports whether the hub hands media by reference: it has a media store
// and knows its public URL.
func (h *Hub) refs() bool { return h.Media != nil && h.PublicURL != "" }

// served is what of the features an engine announced the hub uses with it
// (the welcome's features): media_refs only when it moves media by reference
// at all.
func (h *Hub) served(announced []string) []string {
	var out []string
	for _, f := range announced {
		if f != FeatureMediaRefs || h.refs() {
			out = append(out, f)
		}
	}
	return out
}

// mintUpload reserves media of the workspace and an upload slot for engineID
// that lasts until deadline.
func (h *Hub) mintUpload(ctx context.Context, workspaceID, engineID string, deadline time.Time) (*slot, error) {
	ctx = viewer.WorkspaceContext(ctx, workspaceID)
	o, err := h.Media.Reserve(ctx, "application/octet-stream", "")
	if err != nil {
		return nil, fmt.Errorf("remote: reserve an upload: %w", err)
	}
	s := &slot{workspaceID: workspaceID, token: switchboard.RandomToken(20), mediaURL: o.URL}
	s.url = strings.TrimRight(h.PublicURL, "/") + UploadPath + s.token
	key := uploadPrefix + s.token
	_, err = h.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "engine", engineID, "url", o.URL)
		p.PExpireAt(ctx, key, deadline)
		return nil
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("remote: store an upload slot: %w", err), h.Media.Remove(ctx, o.URL))
	}
	return s, nil
}

// dropUpload removes a slot's media, and with forget the slot itself (the
// command failed or was answered inline); a slot whose bytes were read stays,
// used, until it expires, so that a second PUT is told it was used.
func (h *Hub) dropUpload(s *slot, forget bool) {
	ctx, cancel := context.WithTimeout(viewer.WorkspaceContext(context.Background(), s.workspaceID), 10*time.Second)
	defer cancel()
	var err error
	if forget {
		err = h.rdb.Del(ctx, uploadPrefix+s.token).Err()
	}
	err = errors.Join(err, h.Media.Remove(ctx, s.mediaURL))
	if err != nil {
		h.log().Warn("engine upload not removed (the media prune removes it)", "err", err)
	}
}

// UploadHandler serves PUT UploadPath{token}: an engine, authenticated by its
// engine token (Authorization: Bearer), stores the bytes of a slot minted for
// it; Content-Type is their type. It answers 204; reject answers the refusals
// (in the API's error envelope): 401 without a good token, 403 for another
// engine's slot, 404 for a slot that does not exist or expired, 409 for one
// already used, 413 past the media store's bound.
func (h *Hub) UploadHandler(reject func(w http.ResponseWriter, r *http.Request, err error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.upload(r); err != nil {
			reject(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// Errors of an upload.
var (
	errNoSlot      = switchboard.Errorf(switchboard.ENOTFOUND, "No such upload slot, or it expired.")
	errOthersSlot  = switchboard.Errorf(switchboard.EFORBIDDEN, "The upload slot was given to another engine.")
	errSlotUsed    = switchboard.Errorf(switchboard.ECONFLICT, "The upload slot was used already; a slot takes one upload.")
	errUploadLarge = switchboard.Errorf(switchboard.ETOOLARGE, "The upload is larger than the server stores.")
)

// upload stores the body of an upload request.
func (h *Hub) upload(r *http.Request) error {
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return switchboard.Errorf(switchboard.EUNAUTHORIZED, "An engine token is required (Authorization: Bearer).")
	}
	row, err := h.authenticate(r.Context(), strings.TrimSpace(bearer))
	if err != nil {
		return err
	}
	token := strings.TrimPrefix(r.URL.Path, UploadPath)
	if !h.refs() || len(token) > 64 || !switchboard.IsToken(token) {
		return errNoSlot
	}
	if r.ContentLength > h.Media.MaxSize() {
		return errUploadLarge
	}
	ctx := viewer.WorkspaceContext(r.Context(), row.WorkspaceID)
	res, err := claimUpload.Run(ctx, h.rdb, []string{uploadPrefix + token}, row.ID).Slice()
	if err != nil {
		return err
	}
	status, _ := res[0].(int64)
	mediaURL, _ := res[1].(string)
	switch status {
	case 0:
		return errNoSlot
	case -1:
		return errOthersSlot
	case -2:
		return errSlotUsed
	}
	_, err = h.Media.Fill(ctx, mediaURL, r.Body, r.Header.Get("Content-Type"))
	if errors.Is(err, media.ErrTooLarge) {
		return errUploadLarge
	}
	return err
}
