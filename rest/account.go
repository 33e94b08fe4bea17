package rest

import (
	"net/http"
	"time"
)

// account is the spec's Account object.
type account struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	UserEmail *string   `json:"userEmail"`
	Timezone  *string   `json:"timezone"`
	CreatedAt time.Time `json:"createdAt"`
}

// connection is one entry of the ping result's whatsappConnections.
type connection struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Connected bool   `json:"connected"`
}

// pingResult is the spec's Ping result.
type pingResult struct {
	API                 string       `json:"api"`
	AccountID           string       `json:"accountId"`
	WhatsappConnections []connection `json:"whatsappConnections"`
	Message             *string      `json:"message,omitempty"`
}

// ping serves GET /v1/ping.
func (s *server) ping(w http.ResponseWriter, r *http.Request) error {
	p, err := s.query.Ping(r.Context())
	if err != nil {
		return err
	}
	out := pingResult{API: p.API, AccountID: p.AccountID, WhatsappConnections: []connection{}, Message: p.Message}
	for _, c := range p.WhatsappConnections {
		out.WhatsappConnections = append(out.WhatsappConnections, connection{ID: c.ID, Type: c.Type, Connected: c.Connected})
	}
	return writeData(w, http.StatusOK, out)
}

// account serves GET /v1/account.
func (s *server) account(w http.ResponseWriter, r *http.Request) error {
	ws, err := s.query.Account(r.Context())
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, account{ID: ws.ID, Name: ws.Name, UserEmail: ws.UserEmail,
		Timezone: ws.Timezone, CreatedAt: ws.CreatedAt.UTC()})
}
