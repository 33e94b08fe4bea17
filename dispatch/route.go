package dispatch

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/viewer"
)

// Which engine (number) sends a message (docs/engines.md, "Several numbers"):
//
//  1. the engine the message names (its engine_id), and only that one: while it
//     is not connected the message waits (engine.ErrNoEngine);
//  2. else the engine its chat last used, while it is connected and is not the
//     sandbox (the sandbox never shadows a real engine unless named);
//  3. else the workspace's default engine (DefaultEngines), while it is connected;
//  4. else Engines.Pick, the first connected real engine (the sandbox only in a
//     workspace that owns none).
//
// The chat's engine and the default are preferences, not pins: when they are
// not connected the message goes through Pick's engine. Only a message that
// names its engine waits for it.

// Route returns the engine that sends a message of workspaceID to the chat to,
// naming engineID ("" for none), or engine.ErrNoEngine when none may send it now.
func (d *Dispatcher) Route(ctx context.Context, workspaceID, to, engineID string) (engine.Engine, error) {
	m := &ent.Message{WorkspaceID: workspaceID, To: to, EngineID: engineID}
	rt, err := d.newRouter(ctx, []*ent.Message{m})
	if err != nil {
		return nil, err
	}
	return rt.route(ctx, m)
}

// router routes the messages of one batch, with what routing them needs read
// once for all of them.
type router struct {
	engines  Engines
	chats    map[[2]string]string   // the chat's engine, by workspace id and jid
	defaults map[string]string      // the workspace's default engine, by workspace id
	rows     map[string]*ent.Engine // the engines named above, by id
	picked   map[string]picked      // Engines.Pick's answer, by workspace id, asked once a batch
}

// picked is an answer of Engines.Pick.
type picked struct {
	eng engine.Engine
	err error
}

// newRouter reads, in a few queries for the whole batch, the chats' engines,
// the workspaces' default engines and the rows of every engine they or the
// messages name.
func (d *Dispatcher) newRouter(ctx context.Context, ms []*ent.Message) (*router, error) {
	sys := viewer.SystemContext(ctx)
	rt := &router{engines: d.Engines, chats: map[[2]string]string{}, defaults: map[string]string{},
		rows: map[string]*ent.Engine{}, picked: map[string]picked{}}
	var workspaces, jids, named []string
	for _, m := range ms {
		workspaces = append(workspaces, m.WorkspaceID)
		if m.EngineID != "" {
			named = append(named, m.EngineID)
		} else {
			jids = append(jids, m.To)
		}
	}
	if len(jids) > 0 {
		chats, err := d.Client.Chat.Query().
			Where(chat.WorkspaceIDIn(workspaces...), chat.JidIn(jids...), chat.EngineIDNEQ("")).
			Select(chat.FieldWorkspaceID, chat.FieldJid, chat.FieldEngineID).All(sys)
		if err != nil {
			return nil, err
		}
		for _, c := range chats {
			rt.chats[[2]string{c.WorkspaceID, c.Jid}] = c.EngineID
			named = append(named, c.EngineID)
		}
		defaults, err := DefaultEngines(ctx, d.Client, workspaces...)
		if err != nil {
			return nil, err
		}
		for ws, id := range defaults {
			rt.defaults[ws] = id
			named = append(named, id)
		}
	}
	if len(named) == 0 {
		return rt, nil
	}
	rows, err := d.Client.Engine.Query().Where(entengine.IDIn(named...)).
		Select(entengine.FieldWorkspaceID, entengine.FieldKind).All(sys)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		rt.rows[row.ID] = row
	}
	return rt, nil
}

// route returns the engine that sends m (see the rules above).
func (rt *router) route(ctx context.Context, m *ent.Message) (engine.Engine, error) {
	ctx = viewer.WorkspaceContext(ctx, m.WorkspaceID)
	if m.EngineID != "" {
		return rt.named(ctx, m.WorkspaceID, m.EngineID)
	}
	if id := rt.chats[[2]string{m.WorkspaceID, m.To}]; id != "" {
		if row := rt.rows[id]; row != nil && row.Kind != entengine.KindSandbox {
			if eng, err := rt.named(ctx, m.WorkspaceID, id); !errors.Is(err, engine.ErrNoEngine) {
				return eng, err
			}
		}
	}
	if id := rt.defaults[m.WorkspaceID]; id != "" {
		if eng, err := rt.named(ctx, m.WorkspaceID, id); !errors.Is(err, engine.ErrNoEngine) {
			return eng, err
		}
	}
	if p, ok := rt.picked[m.WorkspaceID]; ok {
		return p.eng, p.err
	}
	eng, err := rt.engines.Pick(ctx, m.WorkspaceID)
	rt.picked[m.WorkspaceID] = picked{eng, err}
	return eng, err
}

// named returns the engine id of the workspace while it is connected, or
// engine.ErrNoEngine (also when the workspace has no such engine any more). A
// sandbox engine is the workspace's sandbox, made on first use.
func (rt *router) named(ctx context.Context, workspaceID, id string) (engine.Engine, error) {
	row := rt.rows[id]
	if row == nil || row.WorkspaceID != workspaceID {
		return nil, engine.ErrNoEngine
	}
	if row.Kind == entengine.KindSandbox {
		return rt.engines.Provided(ctx, workspaceID)
	}
	eng, err := rt.engines.Find(ctx, workspaceID, id)
	if errors.Is(err, engine.ErrDisconnected) || errors.Is(err, engine.ErrNoEngine) {
		return nil, engine.ErrNoEngine
	}
	return eng, err
}

// recordEngines records on the batch's messages the engine each was sent
// through, inside tx: one statement per engine. A message with an engine of its
// own (the one it named, or one an ack recorded first) keeps it.
func recordEngines(ctx context.Context, tx *ent.Tx, batch []claimed, sent []engine.Sent) error {
	byEngine := map[string][]string{}
	for i, c := range batch {
		if sent[i].Err != nil && !errors.Is(sent[i].Err, engine.ErrRejected) {
			continue // not sent: the retry may go through another engine
		}
		id := c.eng.ID()
		c.m.EngineID = id
		byEngine[id] = append(byEngine[id], c.m.ID)
	}
	for id, ids := range byEngine {
		err := tx.Message.Update().Where(message.IDIn(ids...), message.Or(message.EngineIDIsNil(), message.EngineID(""))).
			SetEngineID(id).Exec(ctx)
		if err != nil {
			return err
		}
	}
	return nil
}
