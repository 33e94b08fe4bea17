package rest

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
)

// webhookRecord is the webhook shape of the reference contract; Secret is set only
// in the answer to a create.
type webhookRecord struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"`
	Description string    `json:"description"`
	Status      string    `json:"status"`
	CreatedAt   time.Time `json:"createdAt"`
	Secret      string    `json:"secret,omitempty"`
}

func newWebhookRecord(h *ent.Webhook) webhookRecord {
	return webhookRecord{ID: h.ID, URL: h.URL, Events: h.Events, Description: h.Description,
		Status: h.Status, CreatedAt: h.CreatedAt.UTC()}
}

// deliveryRecord is one delivery with its attempts.
type deliveryRecord struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhookId"`
	EventID       string          `json:"eventId"`
	Type          string          `json:"type"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	NextAttemptAt *time.Time      `json:"nextAttemptAt,omitempty"`
	LastAttemptAt *time.Time      `json:"lastAttemptAt,omitempty"`
	LastError     string          `json:"lastError,omitempty"`
	CreatedAt     time.Time       `json:"createdAt"`
	AttemptLog    []attemptRecord `json:"attemptLog"`
}

type attemptRecord struct {
	Number       int       `json:"number"`
	At           time.Time `json:"at"`
	StatusCode   int       `json:"statusCode,omitempty"`
	Error        string    `json:"error,omitempty"`
	LatencyMs    int64     `json:"latencyMs"`
	ResponseBody string    `json:"responseBody,omitempty"`
	Success      bool      `json:"success"`
}

func newDeliveryRecord(d *ent.Delivery) deliveryRecord {
	out := deliveryRecord{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, Type: d.EventType,
		Status: d.Status, Attempts: d.Attempts, NextAttemptAt: d.NextAttemptAt, LastAttemptAt: d.LastAttemptAt,
		LastError: d.LastError, CreatedAt: d.CreatedAt.UTC(), AttemptLog: []attemptRecord{}}
	for _, a := range d.Edges.AttemptLog {
		out.AttemptLog = append(out.AttemptLog, attemptRecord{Number: a.Number, At: a.At.UTC(), StatusCode: a.StatusCode,
			Error: a.Error, LatencyMs: a.LatencyMs, ResponseBody: a.ResponseBody, Success: a.Success})
	}
	return out
}

// webhookBody is the JSON body of create and update.
type webhookBody struct {
	URL         *string  `json:"url"`
	Events      []string `json:"events"`
	Description *string  `json:"description"`
	Status      *string  `json:"status"`
}

// createWebhook serves POST /v1/webhooks.
func (s *server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var b webhookBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Status != nil {
		return invalidBody("status", "unrecognized_keys", "status cannot be set on create.")
	}
	p, err := s.mutation.CreateWebhook(r.Context(), model.WebhookInput{URL: b.URL, Events: b.Events, Description: b.Description})
	if err != nil {
		return err
	}
	rec := newWebhookRecord(p.Webhook)
	rec.Secret = p.Secret
	return writeData(w, http.StatusCreated, rec)
}

// listWebhooks serves GET /v1/webhooks.
func (s *server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.WebhookList(r.Context(), queryString(r, "order"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]webhookRecord, len(page.Items))
	for i, h := range page.Items {
		out[i] = newWebhookRecord(h)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// getWebhook serves GET /v1/webhooks/{id}.
func (s *server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	h, err := s.query.Webhook(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newWebhookRecord(h))
}

// updateWebhook serves PATCH /v1/webhooks/{id}.
func (s *server) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	var b webhookBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	h, err := s.mutation.UpdateWebhook(r.Context(), chi.URLParam(r, "id"),
		model.WebhookPatch{URL: b.URL, Events: b.Events, Description: b.Description, Status: b.Status})
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newWebhookRecord(h))
}

// deleteWebhook serves DELETE /v1/webhooks/{id}.
func (s *server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	p, err := s.mutation.DeleteWebhook(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, p)
}

// rotateWebhookSecret serves POST /v1/webhooks/{id}/rotate-secret.
func (s *server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	p, err := s.mutation.RotateWebhookSecret(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, p)
}

// listDeliveries serves GET /v1/webhooks/{id}/deliveries.
func (s *server) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.WebhookDeliveries(r.Context(), chi.URLParam(r, "id"), queryString(r, "status"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]deliveryRecord, len(page.Items))
	for i, d := range page.Items {
		out[i] = newDeliveryRecord(d)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// redeliver serves POST /v1/webhooks/{id}/deliveries/{deliveryId}/redeliver.
func (s *server) redeliver(w http.ResponseWriter, r *http.Request) error {
	d, err := s.mutation.RedeliverWebhookDelivery(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "deliveryId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusCreated, newDeliveryRecord(d))
}

// groupChangeBody is the body of POST /v1/sandbox/group-changes.
type groupChangeBody struct {
	GroupID      string   `json:"groupId"`
	Action       string   `json:"action"`
	Participants []string `json:"participants"`
	By           *string  `json:"by"`
	Value        *string  `json:"value"`
}

// simulateGroupChange serves POST /v1/sandbox/group-changes.
func (s *server) simulateGroupChange(w http.ResponseWriter, r *http.Request) error {
	var b groupChangeBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if _, err := s.mutation.SimulateGroupChange(r.Context(), model.GroupChangeInput{GroupID: b.GroupID, Action: b.Action,
		Participants: b.Participants, By: b.By, Value: b.Value}); err != nil {
		return err
	}
	return writeData(w, http.StatusAccepted, map[string]bool{"accepted": true})
}
