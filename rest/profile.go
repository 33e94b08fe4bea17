package rest

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard/graph/model"
)

// profileRecord is the JSON of the account's own profile (docs/profile.md).
type profileRecord struct {
	EngineID   string  `json:"engineId"`
	ID         string  `json:"id"`
	PushName   string  `json:"pushName"`
	About      string  `json:"about"`
	PictureID  *string `json:"pictureId"`
	PictureURL *string `json:"pictureUrl"`
}

func newProfileRecord(p *model.Profile) profileRecord {
	return profileRecord{EngineID: p.EngineID, ID: p.ID, PushName: p.PushName, About: p.About, PictureID: p.PictureID, PictureURL: p.PictureURL}
}

// writeProfile answers a profile, or err.
func writeProfile(w http.ResponseWriter, p *model.Profile, err error) error {
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newProfileRecord(p))
}

// getProfile serves GET /v1/profile.
func (s *server) getProfile(w http.ResponseWriter, r *http.Request) error {
	p, err := s.query.Profile(r.Context(), queryString(r, "engineId"))
	return writeProfile(w, p, err)
}

// updateProfile serves PATCH /v1/profile.
func (s *server) updateProfile(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		PushName *string `json:"pushName"`
		About    *string `json:"about"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	p, err := s.mutation.UpdateProfile(r.Context(), queryString(r, "engineId"), model.ProfileInput{PushName: b.PushName, About: b.About})
	return writeProfile(w, p, err)
}

// setProfilePicture serves PUT /v1/profile/picture: JSON (fileDataUrl or url),
// or multipart/form-data with the image as its file part.
func (s *server) setProfilePicture(w http.ResponseWriter, r *http.Request) error {
	in, done, err := pictureInput(w, r)
	if err != nil {
		return err
	}
	defer done()
	p, err := s.mutation.SetProfilePicture(r.Context(), queryString(r, "engineId"), in)
	return writeProfile(w, p, err)
}

// removeProfilePicture serves DELETE /v1/profile/picture.
func (s *server) removeProfilePicture(w http.ResponseWriter, r *http.Request) error {
	p, err := s.mutation.RemoveProfilePicture(r.Context(), queryString(r, "engineId"))
	return writeProfile(w, p, err)
}

// updateEngineCalls serves PATCH /v1/engines/{id}/calls.
func (s *server) updateEngineCalls(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		RejectCalls        *bool   `json:"rejectCalls"`
		RejectCallsMessage *string `json:"rejectCallsMessage"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	e, err := s.mutation.UpdateEngineCalls(r.Context(), chi.URLParam(r, "id"), model.EngineCallsInput{RejectCalls: b.RejectCalls, RejectCallsMessage: b.RejectCallsMessage})
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newEngineRecord(e))
}

// callRecord is the JSON of a call (call.received's data).
type callRecord struct {
	ID       string    `json:"id"`
	EngineID string    `json:"engineId"`
	From     string    `json:"from"`
	Video    bool      `json:"video"`
	Group    bool      `json:"group"`
	Rejected bool      `json:"rejected"`
	At       time.Time `json:"at"`
}

// simulateCall serves POST /v1/sandbox/calls.
func (s *server) simulateCall(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		From     string  `json:"from"`
		Video    *bool   `json:"video"`
		Group    *bool   `json:"group"`
		EngineID *string `json:"engineId"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	c, err := s.mutation.SimulateCall(r.Context(), model.CallInput{From: b.From, Video: b.Video, Group: b.Group, EngineID: b.EngineID})
	if err != nil {
		return err
	}
	return writeData(w, http.StatusCreated, callRecord{ID: c.ID, EngineID: c.EngineID, From: c.From, Video: c.Video, Group: c.Group,
		Rejected: c.Rejected, At: c.At.UTC()})
}
