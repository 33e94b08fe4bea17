//go:build faults

package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Redis master behind Sentinel is killed while messages are being sent: the
// server follows the Sentinel set to the promoted replica, and every accepted
// message still reaches its final status with its webhook events, none twice.
func TestSentinelFailover(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the Sentinel failover needs redis-server")
		}
		t.Skip("redis-server is not installed")
	}
	h := newHarness(t)
	masterAddr, replicaAddr, sentinelAddr := h.freeAddr(), h.freeAddr(), h.freeAddr()
	port := func(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }
	dir := t.TempDir()
	redisProc := func(name string, args ...string) *exec.Cmd {
		logf, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() })
		return cmd
	}
	common := []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
	master := redisProc("master", append([]string{"--port", port(masterAddr)}, common...)...)
	redisProc("replica", append([]string{"--port", port(replicaAddr), "--replicaof", "127.0.0.1", port(masterAddr)}, common...)...)
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\n"+
		"sentinel monitor switchboard 127.0.0.1 %s 1\n"+
		"sentinel down-after-milliseconds switchboard 1000\n"+
		"sentinel failover-timeout switchboard 10000\n", port(sentinelAddr), dir, port(masterAddr))), 0o644); err != nil {
		t.Fatal(err)
	}
	redisProc("sentinel", conf, "--sentinel")

	ctx := context.Background()
	replica := redis.NewClient(&redis.Options{Addr: replicaAddr})
	defer replica.Close()
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: sentinelAddr})
	defer sentinel.Close()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30 s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("the replica follows the master", func() bool {
		info, _ := replica.Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
	masterOf := func() string {
		addr, _ := sentinel.GetMasterAddrByName(ctx, "switchboard").Result()
		if len(addr) != 2 {
			return ""
		}
		return addr[0] + ":" + addr[1]
	}
	waitFor("Sentinel watches the master", func() bool { return masterOf() == masterAddr })
	// Sentinel learns of replicas from the master's INFO, every 10 s: a master
	// killed before that leaves it nothing to promote.
	waitFor("Sentinel knows the replica", func() bool {
		replicas, _ := sentinel.Replicas(ctx, "switchboard").Result()
		for _, r := range replicas {
			if r["ip"]+":"+r["port"] == replicaAddr && r["flags"] == "slave" && r["master-link-status"] == "ok" {
				return true
			}
		}
		return false
	})

	h.redisURL = "redis-sentinel://" + sentinelAddr + "/0?master=switchboard"
	server := h.proc("server", "all")
	server.start()
	h.key = h.createKey()
	h.createWebhook(server)

	load := h.startLoad(300, []*proc{server}, 4)
	load.waitAccepted(100)
	t.Logf("after %d accepted: kill -9 the Redis master", load.accepted.Load())
	start := time.Now()
	_ = master.Process.Kill()
	waitFor("Sentinel promotes the replica", func() bool { return masterOf() == replicaAddr })
	t.Logf("  the replica is the master after %s", time.Since(start).Round(10*time.Millisecond))
	load.wait()
	h.verify(load.sent(), load.errors500.Load(), nil)
}
