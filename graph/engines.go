package graph

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/viewer"
)

// Engine kinds a workspace can create, and the longest name.
var engineKinds = []string{engine.RowSandbox, engine.RowRemote, engine.RowGateway}

const maxEngineName = 100

// live returns the ids of the workspace's engines whose presence is live.
func (r *Resolver) live(ctx context.Context, workspaceID string) (map[string]bool, error) {
	conns, err := r.Engines.Connections(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(conns))
	for _, c := range conns {
		out[c.ID] = true
	}
	return out, nil
}

// engineList is the use case behind engineList (GET /v1/engines).
func (r *Resolver) engineList(ctx context.Context, limit, skip *int) (*model.EnginePage, error) {
	v, _ := viewer.FromContext(ctx)
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	live, err := r.live(ctx, v.WorkspaceID) // first: it may bring the workspace's sandbox
	if err != nil {
		return nil, err
	}
	q := r.Client.Engine.Query()
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.Order(ent.Asc(entengine.FieldCreatedAt), ent.Asc(entengine.FieldID)).Limit(l).Offset(s).All(ctx)
	if err != nil {
		return nil, err
	}
	def, err := r.defaultEngine(ctx, v.WorkspaceID)
	if err != nil {
		return nil, err
	}
	page := &model.EnginePage{Items: make([]*model.Engine, len(rows)), Limit: l, Skip: s, Total: total}
	for i, row := range rows {
		page.Items[i] = &model.Engine{Row: row, Connected: live[row.ID], Default: row.ID == def}
	}
	return page, nil
}

// engineRow returns an engine of the viewer's workspace by id, or ENOTFOUND.
func (r *Resolver) engineRow(ctx context.Context, id string) (*ent.Engine, error) {
	row, err := r.Client.Engine.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, notFound("id", "No engine with id %s.", quote(id))
	}
	return row, err
}

// engineByID is the use case behind engine (GET /v1/engines/{id}).
func (r *Resolver) engineByID(ctx context.Context, id string) (*model.Engine, error) {
	v, _ := viewer.FromContext(ctx)
	live, err := r.live(ctx, v.WorkspaceID)
	if err != nil {
		return nil, err
	}
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	def, err := r.defaultEngine(ctx, v.WorkspaceID)
	if err != nil {
		return nil, err
	}
	return &model.Engine{Row: row, Connected: live[row.ID], Default: row.ID == def}, nil
}

// createEngine is the use case behind createEngine (POST /v1/engines).
func (r *Resolver) createEngine(ctx context.Context, in model.EngineInput) (*model.EngineCreated, error) {
	v, _ := viewer.FromContext(ctx)
	var p switchboard.Problems
	if !slices.Contains(engineKinds, in.Kind) {
		p.Add("kind", "invalid_enum_value", "kind must be one of %s", strings.Join(engineKinds, ", "))
	}
	name := strings.TrimSpace(deref(in.Name))
	if utf8.RuneCountInString(name) > maxEngineName {
		p.Add("name", "too_big", "name must be at most %d characters", maxEngineName)
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	if in.Kind == engine.RowGateway && r.Gateways == nil {
		return nil, switchboard.Errorf(switchboard.ENOTIMPL, "This server does not run gateway engines.")
	}
	create := r.Client.Engine.Create().SetWorkspaceID(v.WorkspaceID).SetKind(entengine.Kind(in.Kind)).SetName(name)
	var token string
	if in.Kind == engine.RowRemote {
		var hash, prefix string
		token, hash, prefix = auth.NewEngineToken()
		create.SetTokenHash(hash).SetTokenPrefix(prefix).SetType(engine.KindRegular)
	}
	row, err := create.Save(ctx)
	if err != nil {
		return nil, err
	}
	if in.Kind == engine.RowGateway {
		// It starts here at once, unpaired: its QR code is the next call.
		if err := r.Gateways.Start(ctx, row); err != nil {
			return nil, err
		}
		if row, err = r.Client.Engine.Get(ctx, row.ID); err != nil {
			return nil, err
		}
	}
	out := &model.EngineCreated{Engine: &model.Engine{Row: row}}
	if token != "" {
		out.Token = &token
	}
	if in.Kind == engine.RowSandbox {
		// The sandbox connects at once (unless the workspace has one already).
		if _, err := r.Engines.Ensure(ctx, v.WorkspaceID); err != nil && !errors.Is(err, engine.ErrNoEngine) {
			return nil, err
		}
		live, err := r.live(ctx, v.WorkspaceID)
		if err != nil {
			return nil, err
		}
		out.Engine.Connected = live[row.ID]
	}
	return out, nil
}

// endSession ends an engine's session on every replica.
func (r *Resolver) endSession(ctx context.Context, workspaceID, engineID, reason string) error {
	if r.Sessions != nil {
		return r.Sessions.End(ctx, workspaceID, engineID, reason)
	}
	r.Engines.Detach(ctx, workspaceID, engineID)
	return nil
}

// deleteEngine is the use case behind deleteEngine (DELETE /v1/engines/{id}).
func (r *Resolver) deleteEngine(ctx context.Context, id string) (bool, error) {
	v, _ := viewer.FromContext(ctx)
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return false, err
	}
	if row.Kind == entengine.KindGateway && row.DeviceJid != "" {
		// Unlink the device from the phone while the engine can; an engine that
		// cannot now leaves a linked device the phone can remove itself.
		if eng, err := r.Engines.Find(ctx, v.WorkspaceID, row.ID); err == nil {
			if lo, ok := eng.(engine.LoggerOut); ok {
				_ = lo.Logout(ctx)
			}
		}
	}
	if err := r.Client.Engine.DeleteOne(row).Exec(ctx); err != nil {
		return false, err
	}
	return true, r.endSession(ctx, v.WorkspaceID, row.ID, engine.EndDeleted)
}

// logoutEngine is the use case behind logoutEngine (POST /v1/engines/{id}/logout).
func (r *Resolver) logoutEngine(ctx context.Context, id string) (*model.Engine, error) {
	v, _ := viewer.FromContext(ctx)
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	// An engine that can unlink itself is asked to; one that cannot (or is gone)
	// is logged out all the same.
	if eng, err := r.Engines.Find(ctx, v.WorkspaceID, row.ID); err == nil && engine.Serves(eng, "logout") {
		if lo, ok := eng.(engine.LoggerOut); ok {
			if err := lo.Logout(ctx); err != nil {
				return nil, err
			}
		}
	}
	row, err = row.Update().SetState(string(engine.StateLoggedOut)).Save(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.endSession(ctx, v.WorkspaceID, row.ID, engine.EndLoggedOut); err != nil {
		return nil, err
	}
	def, err := r.defaultEngine(ctx, v.WorkspaceID)
	if err != nil {
		return nil, err
	}
	return &model.Engine{Row: row, Default: row.ID == def}, nil
}

// pairer returns the engine to pair, or why there is none: not_pairable for
// engines with nothing to pair, engine_disconnected when it is not connected.
func (r *Resolver) pairer(ctx context.Context, id string) (engine.Pairer, error) {
	v, _ := viewer.FromContext(ctx)
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	notPairable := switchboard.Errorf(switchboard.ENOTPAIRABLE,
		"The %s engine %s has nothing to pair: it is linked to its account by itself.", row.Kind, row.ID)
	if row.Kind == entengine.KindSandbox {
		return nil, notPairable
	}
	eng, err := r.Engines.Find(ctx, v.WorkspaceID, row.ID)
	if errors.Is(err, engine.ErrDisconnected) && row.Kind == entengine.KindRemote {
		return nil, notPairable // a remote engine pairs on its own side, if at all
	} else if err != nil {
		return nil, err
	}
	p, ok := eng.(engine.Pairer)
	if !ok || !engine.Serves(eng, "pairing") {
		return nil, notPairable
	}
	return p, nil
}

// enginePairingQR is the use case behind enginePairingQR (GET /v1/engines/{id}/qr).
func (r *Resolver) enginePairingQR(ctx context.Context, id string) (string, error) {
	p, err := r.pairer(ctx, id)
	if err != nil {
		return "", err
	}
	return p.PairingQR(ctx)
}

// QRCodePNG draws a pairing QR code's payload as a 256-pixel PNG.
func QRCodePNG(payload string) ([]byte, error) {
	return qrcode.Encode(payload, qrcode.Medium, 256)
}

// enginePairingQRImage is the use case behind enginePairingQRImage: the QR code
// as a PNG data: URL.
func (r *Resolver) enginePairingQRImage(ctx context.Context, id string) (string, error) {
	code, err := r.enginePairingQR(ctx, id)
	if err != nil {
		return "", err
	}
	png, err := QRCodePNG(code)
	if err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), nil
}

// enginePairingCode is the use case behind enginePairingCode (POST /v1/engines/{id}/pairing-code).
func (r *Resolver) enginePairingCode(ctx context.Context, id, phone string) (string, error) {
	jid, err := normalizeField("phone", phone)
	if err != nil {
		return "", err
	}
	if engine.ChatKind(jid) != engine.ChatContact {
		var p switchboard.Problems
		p.Add("phone", "invalid_string", "phone must be a phone number in E.164 form")
		return "", p.Err(switchboard.EVALIDATION)
	}
	pr, err := r.pairer(ctx, id)
	if err != nil {
		return "", err
	}
	digits, _, _ := strings.Cut(jid, "@")
	return pr.PairingCode(ctx, digits)
}
