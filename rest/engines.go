package rest

import (
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/graph"
	"github.com/switchboardhq/switchboard/graph/model"
)

// engineRecord is an engine as /v1/engines shows it: the reference's fields (id,
// type, connected, state, stream, hasSynced) and Switchboard's own.
type engineRecord struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Connected bool   `json:"connected"`
	// Default says the engine is the workspace's default (a Switchboard addition).
	Default   bool    `json:"default"`
	State     string  `json:"state"`
	Stream    *string `json:"stream"`
	HasSynced *bool   `json:"hasSynced"`
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	// Phone is the account's own number as the engine reported it (a
	// Switchboard addition); null when it reported none.
	Phone       *string `json:"phone"`
	TokenPrefix *string `json:"tokenPrefix,omitempty"`
	// RejectCalls and RejectCallsMessage are the engine's call settings
	// (docs/calls.md).
	RejectCalls        bool    `json:"rejectCalls"`
	RejectCallsMessage *string `json:"rejectCallsMessage"`
	// Restriction is why WhatsApp restricts a gateway's account now, until
	// RestrictedUntil; both absent when it does not.
	Restriction     *string    `json:"restriction,omitempty"`
	RestrictedUntil *time.Time `json:"restrictedUntil,omitempty"`
	// LastError is the engine's last connection or pairing error (why a QR
	// answers 503), at LastErrorAt; null when it never had one.
	LastError      *string    `json:"lastError"`
	LastErrorAt    *time.Time `json:"lastErrorAt"`
	ConnectedAt    *time.Time `json:"connectedAt"`
	DisconnectedAt *time.Time `json:"disconnectedAt"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	// Token is a new remote engine's token, in the create answer only.
	Token *string `json:"token,omitempty"`
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func newEngineRecord(e *model.Engine) engineRecord {
	return engineRecord{ID: e.ID(), Type: e.Type(), Connected: e.Connected, Default: e.Default, State: e.State(), Stream: e.Stream(),
		HasSynced: e.HasSynced(), Kind: e.Kind(), Name: e.Name(), Phone: e.Phone(), TokenPrefix: e.TokenPrefix(),
		RejectCalls: e.RejectCalls(), RejectCallsMessage: e.RejectCallsMessage(),
		Restriction: e.Restriction(), RestrictedUntil: utc(e.RestrictedUntil()),
		LastError: e.LastError(), LastErrorAt: utc(e.LastErrorAt()),
		ConnectedAt: utc(e.ConnectedAt()), DisconnectedAt: utc(e.DisconnectedAt()),
		CreatedAt: e.CreatedAt().UTC(), UpdatedAt: e.UpdatedAt().UTC()}
}

// listEngines serves GET /v1/engines.
func (s *server) listEngines(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.EngineList(r.Context(), limit, skip)
	if err != nil {
		return err
	}
	out := make([]engineRecord, len(page.Items))
	for i, e := range page.Items {
		out[i] = newEngineRecord(e)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// createEngine serves POST /v1/engines.
func (s *server) createEngine(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Kind *string `json:"kind"`
		Name *string `json:"name"`
	}
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	if body.Kind == nil {
		return required("kind")
	}
	created, err := s.mutation.CreateEngine(r.Context(), model.EngineInput{Kind: *body.Kind, Name: body.Name})
	if err != nil {
		return err
	}
	rec := newEngineRecord(created.Engine)
	rec.Token = created.Token
	return writeData(w, http.StatusCreated, rec)
}

// getEngine serves GET /v1/engines/{id}.
func (s *server) getEngine(w http.ResponseWriter, r *http.Request) error {
	e, err := s.query.Engine(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newEngineRecord(e))
}

// deleteEngine serves DELETE /v1/engines/{id}.
func (s *server) deleteEngine(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if _, err := s.mutation.DeleteEngine(r.Context(), id); err != nil {
		return err
	}
	return writeData(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
}

// logoutEngine serves POST /v1/engines/{id}/logout.
func (s *server) logoutEngine(w http.ResponseWriter, r *http.Request) error {
	e, err := s.mutation.LogoutEngine(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newEngineRecord(e))
}

// restartEngine serves POST /v1/engines/{id}/restart.
func (s *server) restartEngine(w http.ResponseWriter, r *http.Request) error {
	e, err := s.mutation.RestartEngine(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newEngineRecord(e))
}

// setDefaultEngine serves POST /v1/engines/{id}/default.
func (s *server) setDefaultEngine(w http.ResponseWriter, r *http.Request) error {
	e, err := s.mutation.SetDefaultEngine(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newEngineRecord(e))
}

// qrFormats are the answers GET /v1/engines/{id}/qr gives, by ?format=.
var qrFormats = []string{"json", "png", "raw"}

// engineQR serves GET /v1/engines/{id}/qr: the pairing QR code as a PNG image
// (?format=png or Accept: image/png), its raw payload as text (?format=raw or
// Accept: text/plain), or JSON {qr} (the default).
func (s *server) engineQR(w http.ResponseWriter, r *http.Request) error {
	format := r.URL.Query().Get("format")
	if format == "" {
		accept := r.Header.Get("Accept")
		switch {
		case strings.Contains(accept, "image/png"):
			format = "png"
		case strings.Contains(accept, "text/plain"):
			format = "raw"
		default:
			format = "json"
		}
	}
	if format != "json" && format != "png" && format != "raw" {
		var p switchboard.Problems
		p.Add("format", "invalid_enum_value", "format must be one of %s", strings.Join(qrFormats, ", "))
		return p.Err(switchboard.EINVALID)
	}
	qr, err := s.mutation.EnginePairingQR(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	switch format {
	case "png":
		png, err := graph.QRCodePNG(qr)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(png)
		return nil
	case "raw":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(qr))
		return nil
	}
	return writeData(w, http.StatusOK, map[string]string{"qr": qr})
}

// enginePairingCode serves POST /v1/engines/{id}/pairing-code.
func (s *server) enginePairingCode(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Phone *string `json:"phone"`
	}
	if err := decodeJSON(w, r, &body, false); err != nil {
		return err
	}
	if body.Phone == nil {
		return required("phone")
	}
	code, err := s.mutation.EnginePairingCode(r.Context(), chi.URLParam(r, "id"), *body.Phone)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, map[string]string{"code": code})
}
