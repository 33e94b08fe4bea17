package remote_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// groupKeeper is a remote engine that serves group_invites, group_requests
// and communities, and records them.
type groupKeeper struct{ actor }

func (k *groupKeeper) GroupInviteCode(_ context.Context, groupID string, reset bool) (string, error) {
	return "AbCdEf123456", k.note(fmt.Sprintf("GroupInviteCode %s %t", groupID, reset))
}

func (k *groupKeeper) GroupInvitePreview(_ context.Context, code string) (engine.GroupPreview, error) {
	if code == "revoked1" {
		return engine.GroupPreview{}, &engine.GroupRuleError{Rule: engine.RuleInviteRevoked, Message: "reset"}
	}
	return engine.GroupPreview{GroupID: "120363000000000001@g.us", Name: "Club", ParticipantCount: 3}, k.note("GroupInvitePreview " + code)
}

func (k *groupKeeper) JoinGroup(_ context.Context, code string) (string, error) {
	return "120363000000000001@g.us", k.note("JoinGroup " + code)
}

func (k *groupKeeper) GroupRequests(_ context.Context, groupID string) ([]engine.JoinRequest, error) {
	return []engine.JoinRequest{{ChatID: "15552223333@c.us", RequestedAt: time.Unix(1_800_000_000, 0).UTC()}}, k.note("GroupRequests " + groupID)
}

func (k *groupKeeper) AnswerGroupRequests(_ context.Context, groupID string, ps []string, approve bool) ([]engine.Added, error) {
	out := make([]engine.Added, len(ps))
	for i, p := range ps {
		out[i] = engine.Added{Participant: p, Added: i == 0}
	}
	return out, k.note(fmt.Sprintf("AnswerGroupRequests %s %s %t", groupID, strings.Join(ps, ","), approve))
}

func (k *groupKeeper) SetGroupJoinApproval(_ context.Context, groupID string, on bool) error {
	return k.note(fmt.Sprintf("SetGroupJoinApproval %s %t", groupID, on))
}

func (k *groupKeeper) Community(_ context.Context, groupID string) (engine.Community, error) {
	return engine.Community{GroupID: groupID, IsCommunity: true, SubGroups: []engine.SubGroup{{GroupID: "120363000000000002@g.us", Name: "News", IsDefault: true}}},
		k.note("Community " + groupID)
}

// The group lifecycle capabilities are announced and cross the wire with their
// arguments and answers; a broken rule keeps its name.
func TestGroupInvitesCrossTheWire(t *testing.T) {
	k := &groupKeeper{}
	caps := engine.CapabilitiesOf(k)
	for _, c := range []string{engine.CapGroupInvites, engine.CapGroupRequests, engine.CapCommunities} {
		if !contains(caps, c) {
			t.Fatalf("capabilities %v lack %s", caps, c)
		}
	}
	client, _ := storagetest.SQLite(t)
	ws := client.Workspace.Create().SetName("acme").SaveX(sys)
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	r := newReplica(t, rdb, client, &recorder{})
	token, hash, prefix := auth.NewEngineToken()
	row := client.Engine.Create().SetWorkspaceID(ws.ID).SetKind(entengine.KindRemote).SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)
	c := &remote.Client{URL: r.url, Token: token, Kind: engine.KindGateway, Capabilities: caps, NoReconnect: true}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return k, nil })
	}()
	var far engine.Engine
	eventually(t, "the engine connects", func() bool {
		got, err := r.hub.Get(context.Background(), ws.ID, row.ID)
		far = got
		return err == nil
	})
	gid := "120363000000000001@g.us"
	inv := far.(engine.GroupInviter)
	if code, err := inv.GroupInviteCode(ctx, gid, true); err != nil || code != "AbCdEf123456" {
		t.Fatalf("GroupInviteCode = %q, %v", code, err)
	}
	if p, err := inv.GroupInvitePreview(ctx, "AbCdEf123456"); err != nil || p.Name != "Club" || p.ParticipantCount != 3 {
		t.Fatalf("GroupInvitePreview = %+v, %v", p, err)
	}
	var rule *engine.GroupRuleError
	if _, err := inv.GroupInvitePreview(ctx, "revoked1"); !errors.As(err, &rule) || rule.Rule != engine.RuleInviteRevoked {
		t.Errorf("a revoked code: %v", err)
	}
	if id, err := inv.JoinGroup(ctx, "AbCdEf123456"); err != nil || id != gid {
		t.Fatalf("JoinGroup = %q, %v", id, err)
	}
	req := far.(engine.GroupRequester)
	if reqs, err := req.GroupRequests(ctx, gid); err != nil || len(reqs) != 1 || !reqs[0].RequestedAt.Equal(time.Unix(1_800_000_000, 0)) {
		t.Fatalf("GroupRequests = %+v, %v", reqs, err)
	}
	res, err := req.AnswerGroupRequests(ctx, gid, []string{"15552223333@c.us", "15554445555@c.us"}, false)
	if err != nil || len(res) != 2 || !res[0].Added || res[1].Added {
		t.Fatalf("AnswerGroupRequests = %+v, %v", res, err)
	}
	if err := req.SetGroupJoinApproval(ctx, gid, true); err != nil {
		t.Fatal(err)
	}
	cm, err := far.(engine.Communities).Community(ctx, gid)
	if err != nil || !cm.IsCommunity || len(cm.SubGroups) != 1 || !cm.SubGroups[0].IsDefault {
		t.Fatalf("Community = %+v, %v", cm, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	want := []string{"GroupInviteCode " + gid + " true", "GroupInvitePreview AbCdEf123456", "JoinGroup AbCdEf123456",
		"GroupRequests " + gid, "AnswerGroupRequests " + gid + " 15552223333@c.us,15554445555@c.us false",
		"SetGroupJoinApproval " + gid + " true", "Community " + gid}
	if diff := cmp.Diff(want, k.calls); diff != "" {
		t.Errorf("commands the engine served (-want +got):\n%s", diff)
	}
}
