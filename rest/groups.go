package rest

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph"
	"github.com/switchboardhq/switchboard/graph/model"
)

// groupRecord is the spec's full group shape (create, get, update and the
// member operations). Participants is null unless they were asked for; the
// participants a call could not add are listed only when there are some.
type groupRecord struct {
	ID                 string               `json:"id"`
	Name               string               `json:"name"`
	Description        string               `json:"description"`
	Owner              string               `json:"owner"`
	CreatedAt          string               `json:"createdAt"`
	LastMessageAt      *string              `json:"lastMessageAt,omitempty"`
	ParticipantCount   int                  `json:"participantCount"`
	Announce           bool                 `json:"announce"`
	Restrict           bool                 `json:"restrict"`
	JoinApproval       bool                 `json:"joinApproval"`
	Participants       *[]participantRecord `json:"participants"`
	FailedParticipants []failedParticipant  `json:"failedParticipants,omitempty"`
}

// participantRecord is a participant of the full group shape.
type participantRecord struct {
	ChatID       string `json:"chatId"`
	IsAdmin      bool   `json:"isAdmin"`
	IsSuperAdmin bool   `json:"isSuperAdmin"`
	Name         string `json:"name,omitempty"`
}

// failedParticipant is a participant the network did not add, and why.
type failedParticipant struct {
	Participant string `json:"participant"`
	ChatID      string `json:"chatId"`
	Code        string `json:"code"`
	Message     string `json:"message"`
}

// newGroupItem renders a stored group as the spec's group list item.
func newGroupItem(c *ent.Chat) groupItem {
	item := groupItem{ID: c.Jid, Name: c.Name, Description: c.Description, Owner: c.Owner,
		CreatedAt: c.CreatedAt.UTC().Format(timeFormat), ParticipantCount: c.ParticipantCount, Restrict: c.Restrict}
	if c.LastMessageAt != nil {
		at := c.LastMessageAt.UTC().Format(timeFormat)
		item.LastMessageAt = &at
	}
	return item
}

// newGroupRecord renders a group in the full shape.
func newGroupRecord(g *model.Group) groupRecord {
	item := newGroupItem(g.Chat)
	rec := groupRecord{ID: item.ID, Name: item.Name, Description: item.Description, Owner: item.Owner,
		CreatedAt: item.CreatedAt, LastMessageAt: item.LastMessageAt, ParticipantCount: item.ParticipantCount,
		Announce: g.Chat.Announce, Restrict: item.Restrict, JoinApproval: g.Chat.JoinApproval}
	if g.Participants != nil {
		ps := make([]participantRecord, len(g.Participants))
		for i, p := range g.Participants {
			ps[i] = participantRecord{ChatID: p.ChatID, IsAdmin: p.IsAdmin, IsSuperAdmin: p.IsSuperAdmin}
			if p.Name != nil {
				ps[i].Name = *p.Name
			}
		}
		rec.Participants = &ps
	}
	return rec
}

// newGroupResult renders what a create or an add answered.
func newGroupResult(res *model.GroupResult) groupRecord {
	rec := newGroupRecord(res.Group)
	for _, f := range res.FailedParticipants {
		rec.FailedParticipants = append(rec.FailedParticipants, failedParticipant{Participant: f.Participant, ChatID: f.ChatID, Code: f.Code, Message: f.Message})
	}
	return rec
}

// renamePaths renames the fields an error of the core names (its details'
// paths, and the start of its message) to the request's names for them.
func renamePaths(err error, names map[string]string) error {
	var e *switchboard.Error
	if !errors.As(err, &e) {
		return err
	}
	for i, d := range e.Details {
		head, rest, _ := strings.Cut(d.Path, ".")
		if to, ok := names[head]; ok {
			e.Details[i].Path = strings.TrimSuffix(to+"."+rest, ".")
			e.Details[i].Message = renameStart(d.Message, head, to)
			e.Message = renameStart(e.Message, head, to)
		}
	}
	return err
}

func renameStart(msg, from, to string) string {
	if rest, ok := strings.CutPrefix(msg, from+" "); ok {
		return to + " " + rest
	}
	return msg
}

func required(field string) error {
	return &switchboard.Error{Code: switchboard.EVALIDATION, Message: field + " is required.",
		Details: []switchboard.Detail{{Path: field, Code: "invalid_type", Message: "Required"}}}
}

// listGroups serves GET /v1/groups.
func (s *server) listGroups(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	archive := queryBool(r, "includeArchive", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.GroupList(r.Context(), queryString(r, "searchToken"), archive, limit, skip)
	if err != nil {
		return err
	}
	out := make([]groupItem, len(page.Items))
	for i, g := range page.Items {
		out[i] = newGroupItem(g.Chat)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// getGroup serves GET /v1/groups/{id} (spec endpoint 10): include=participants
// is the only include there is.
func (s *server) getGroup(w http.ResponseWriter, r *http.Request) error {
	include := queryString(r, "include")
	if include != nil && *include != "participants" {
		return &switchboard.Error{Code: switchboard.EINVALID, Message: "include must be participants.",
			Details: []switchboard.Detail{{Path: "include", Code: "invalid_enum_value", Message: "include must be participants"}}}
	}
	g, err := s.query.Group(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	if include != nil {
		if _, err := s.core.Group().Participants(r.Context(), g); err != nil {
			return err
		}
	}
	return writeData(w, http.StatusOK, newGroupRecord(g))
}

// createGroup serves POST /v1/groups (spec endpoint 9).
func (s *server) createGroup(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Name         *string   `json:"name"`
		Participants *[]string `json:"participants"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	switch {
	case b.Name == nil:
		return required("name")
	case b.Participants == nil:
		return required("participants")
	}
	res, err := s.mutation.CreateGroup(r.Context(), *b.Name, *b.Participants)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newGroupResult(res))
}

// updateGroup serves PATCH /v1/groups/{id}.
func (s *server) updateGroup(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Name     *string `json:"name"`
		Settings *struct {
			Announce           *bool   `json:"announce"`
			Restrict           *bool   `json:"restrict"`
			EditInfoAdminsOnly *bool   `json:"editInfoAdminsOnly"`
			Description        *string `json:"description"`
			JoinApproval       *bool   `json:"joinApproval"`
		} `json:"settings"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	in := model.GroupUpdateInput{Name: b.Name}
	if st := b.Settings; st != nil {
		in.Announce, in.Restrict, in.EditInfoAdminsOnly, in.Description = st.Announce, st.Restrict, st.EditInfoAdminsOnly, st.Description
		in.JoinApproval = st.JoinApproval
	}
	g, err := s.mutation.UpdateGroup(r.Context(), chi.URLParam(r, "id"), in)
	if err != nil {
		return renamePaths(err, map[string]string{"description": "settings.description", "announce": "settings.announce",
			"restrict": "settings.restrict", "editInfoAdminsOnly": "settings.editInfoAdminsOnly", "joinApproval": "settings.joinApproval"})
	}
	return writeData(w, http.StatusOK, newGroupRecord(g))
}

// addGroupMembers serves POST /v1/groups/{id}/members: one participant as
// chatId, or several as participants.
func (s *server) addGroupMembers(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		ChatID       *string   `json:"chatId"`
		Participants *[]string `json:"participants"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	var list []string
	single := false
	switch {
	case b.ChatID != nil && b.Participants != nil:
		return &switchboard.Error{Code: switchboard.EVALIDATION, Message: "Give chatId or participants, not both.",
			Details: []switchboard.Detail{{Path: "chatId", Code: "invalid_union", Message: "Give chatId or participants, not both"}}}
	case b.ChatID != nil:
		list, single = []string{*b.ChatID}, true
	case b.Participants != nil:
		list = *b.Participants
	default:
		return required("participants")
	}
	res, err := s.mutation.AddGroupParticipants(r.Context(), chi.URLParam(r, "id"), list)
	var e *switchboard.Error
	if single && errors.As(err, &e) {
		// One participant given as chatId: its problems are chatId's.
		for i, d := range e.Details {
			if strings.HasPrefix(d.Path, "participants") {
				e.Details[i].Path = "chatId"
			}
		}
	}
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newGroupResult(res))
}

// participantRoute is a route about one participant of a group: chatId names it.
func (s *server) participantRoute(do func(ctx context.Context, id, participant string) (*model.Group, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		g, err := do(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "chatId"))
		if err != nil {
			return renamePaths(err, map[string]string{"participant": "chatId"})
		}
		return writeData(w, http.StatusOK, newGroupRecord(g))
	}
}

// leaveGroup serves DELETE /v1/groups/{id}/members/me: 204, also when the
// account left before.
func (s *server) leaveGroup(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.mutation.LeaveGroup(r.Context(), chi.URLParam(r, "id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// maxPictureBody bounds the JSON body of a group picture: the reference's
// fileDataUrl bound, and room for the other fields.
const maxPictureBody = graph.MaxGroupPictureDataURL + 64<<10

// setGroupPicture serves PUT /v1/groups/{id}/picture: JSON (fileDataUrl or url),
// or multipart/form-data with the image as its file part.
func (s *server) setGroupPicture(w http.ResponseWriter, r *http.Request) error {
	in, done, err := pictureInput(w, r)
	if err != nil {
		return err
	}
	defer done()
	g, err := s.mutation.SetGroupPicture(r.Context(), chi.URLParam(r, "id"), in)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newGroupRecord(g))
}

// pictureInput decodes a picture (a group's or the account's): multipart with
// a file part, or JSON with fileDataUrl or url. done closes the file part once
// the picture is read.
func pictureInput(w http.ResponseWriter, r *http.Request) (in model.GroupPictureInput, done func(), err error) {
	done = func() {}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		if err = parseMultipart(w, r); err != nil {
			return in, done, err
		}
		var p switchboard.Problems
		for name, v := range r.MultipartForm.Value {
			switch name {
			case "fileName":
				in.FileName = &v[0]
			case "fileMimeType":
				in.FileMimeType = &v[0]
			case "url":
				in.URL = &v[0]
			case "fileDataUrl":
				in.FileDataURL = &v[0]
			default:
				p.Add(name, "unrecognized_keys", "Unknown field %q; accepted fields: file, fileDataUrl, url, fileName, fileMimeType.", name)
			}
		}
		for name, files := range r.MultipartForm.File {
			if name != "file" {
				p.Add(name, "unrecognized_keys", "Unknown file part %q; send the image as file.", name)
				continue
			}
			f, ferr := files[0].Open()
			if ferr != nil {
				return in, done, invalidBody("file", "invalid_multipart", "file could not be read.")
			}
			done = func() { _ = f.Close() }
			in.File = &graphql.Upload{File: f, Filename: files[0].Filename, Size: files[0].Size, ContentType: files[0].Header.Get("Content-Type")}
		}
		if err := p.Err(switchboard.EINVALID); err != nil {
			return in, done, err
		}
	} else {
		var b struct {
			FileDataURL  *string `json:"fileDataUrl"`
			URL          *string `json:"url"`
			FileName     *string `json:"fileName"`
			FileMimeType *string `json:"fileMimeType"`
		}
		if err := decodeJSONUpTo(w, r, &b, false, maxPictureBody); err != nil {
			return in, done, err
		}
		in = model.GroupPictureInput{FileDataURL: b.FileDataURL, URL: b.URL, FileName: b.FileName, FileMimeType: b.FileMimeType}
	}
	return in, done, nil
}
