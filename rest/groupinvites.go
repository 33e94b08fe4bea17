package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
)

// The rest of a group's lifecycle (docs/groups.md, "Invites, join requests
// and communities"): invite links, joining by them, join requests and
// communities.

// getGroupInvite serves GET /v1/groups/{id}/invite.
func (s *server) getGroupInvite(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.query.GroupInvite(r.Context(), chi.URLParam(r, "id"), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, inv)
}

// resetGroupInvite serves POST /v1/groups/{id}/invite/reset.
func (s *server) resetGroupInvite(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.mutation.ResetGroupInvite(r.Context(), chi.URLParam(r, "id"), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, inv)
}

// previewGroupInvite serves GET /v1/groups/invites/{code}.
func (s *server) previewGroupInvite(w http.ResponseWriter, r *http.Request) error {
	p, err := s.query.GroupInvitePreview(r.Context(), chi.URLParam(r, "code"), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, p)
}

// joinGroup serves POST /v1/groups/join: {code} or {link}.
func (s *server) joinGroup(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Code *string `json:"code"`
		Link *string `json:"link"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	field, code := "code", b.Code
	switch {
	case b.Code != nil && b.Link != nil:
		return &switchboard.Error{Code: switchboard.EVALIDATION, Message: "Give code or link, not both.",
			Details: []switchboard.Detail{{Path: "link", Code: "invalid_union", Message: "Give code or link, not both"}}}
	case b.Link != nil:
		field, code = "link", b.Link
	case b.Code == nil:
		return required("code")
	}
	g, err := s.mutation.JoinGroup(r.Context(), *code, queryString(r, "engineId"))
	if err != nil {
		return renamePaths(err, map[string]string{"code": field})
	}
	return writeData(w, http.StatusOK, newGroupRecord(g))
}

// listGroupJoinRequests serves GET /v1/groups/{id}/requests.
func (s *server) listGroupJoinRequests(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.GroupJoinRequests(r.Context(), chi.URLParam(r, "id"), queryString(r, "engineId"), limit, skip)
	if err != nil {
		return err
	}
	return writeList(w, page.Items, page.Limit, page.Skip, page.Total)
}

// answerJoinRequests serves POST /v1/groups/{id}/requests/approve and
// /reject: {participants}.
func answerJoinRequests(approve bool) func(*server, http.ResponseWriter, *http.Request) error {
	return func(s *server, w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Participants *[]string `json:"participants"`
		}
		if err := decodeJSON(w, r, &b, false); err != nil {
			return err
		}
		if b.Participants == nil {
			return required("participants")
		}
		res, err := s.mutation.AnswerGroupJoinRequests(r.Context(), chi.URLParam(r, "id"), *b.Participants, approve, queryString(r, "engineId"))
		if err != nil {
			return err
		}
		return writeData(w, http.StatusOK, res)
	}
}

// getGroupCommunity serves GET /v1/groups/{id}/community.
func (s *server) getGroupCommunity(w http.ResponseWriter, r *http.Request) error {
	c, err := s.query.GroupCommunity(r.Context(), chi.URLParam(r, "id"), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, c)
}
