package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The rows whose anchor is a target of the performance issue rather than a
// measured bare program: the SQL statements a message costs and the server's
// memory at rest.

// Targets of the performance issue.
const (
	statementsTarget        = 25 // SQL statements per message
	statementsWebhookTarget = 40 // the same with one webhook on every message event
	anonTargetMB            = 20 // idle anonymous memory (RssAnon)
)

// memory is what /proc tells of the server under test, in bytes.
type memory struct {
	anon, rss int64
}

// memoryNow reads the server's anonymous and resident memory (RssAnon, VmRSS).
func (s *server) memoryNow() memory {
	pid := s.cmd.Process.Pid
	return memory{anon: procStatus(pid, "RssAnon:"), rss: procStatus(pid, "VmRSS:")}
}

// memoryRow prints the idle RssAnon against its target, with the idle RSS beside
// the binary's size and the peak RSS (VmHWM) of the whole run.
func memoryRow(idle memory, peak int64, bin string) {
	var size int64
	if fi, err := os.Stat(bin); err == nil {
		size = fi.Size()
	}
	anon := mb(idle.anon)
	fmt.Printf("%-10s %14s %14s %8s  (idle RssAnon; idle RSS %.1f MB beside the binary's %.1f MB; peak RSS %.1f MB)\n",
		"memory", fmt.Sprintf("<= %d MB", anonTargetMB), fmt.Sprintf("%.1f MB", anon),
		fmt.Sprintf("%.2fx", anon/anonTargetMB), mb(idle.rss), mb(size), mb(peak))
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// figure is one line of bench/statements.sh: statements and commits (per message
// for a burst) and what the script says of them.
type figure struct {
	statements, commits float64
	note                string
}

var figureLine = regexp.MustCompile(`^(message|idle|burst) (no-webhook|webhook): ([0-9.]+) statements, ([0-9.]+) commits(?: per message)? \((.*)\)$`)

// runStatements runs bench/statements.sh with bin on the Redis index two after
// the server's (the delivery row's; STATEMENTS_REDIS_DB overrides it) and returns
// its figures by "<window> <case>", e.g. "burst webhook".
func runStatements(bin string) (map[string]figure, error) {
	opt, err := redis.ParseURL(*redisURL)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", "bench/statements.sh")
	cmd.Env = append(os.Environ(), "STATEMENTS_BIN="+bin)
	if os.Getenv("STATEMENTS_REDIS_DB") == "" {
		cmd.Env = append(cmd.Env, "STATEMENTS_REDIS_DB="+strconv.Itoa(opt.DB+2))
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench/statements.sh: %w\n%s", err, out)
	}
	figures := map[string]figure{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := figureLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		st, _ := strconv.ParseFloat(m[3], 64)
		co, _ := strconv.ParseFloat(m[4], 64)
		figures[m[1]+" "+m[2]] = figure{statements: st, commits: co, note: m[5]}
	}
	for _, key := range []string{"message no-webhook", "idle no-webhook", "burst no-webhook", "message webhook", "idle webhook", "burst webhook"} {
		if _, ok := figures[key]; !ok {
			return nil, fmt.Errorf("bench/statements.sh printed no %q line:\n%s", key, out)
		}
	}
	return figures, nil
}

// statementsRows prints the statements per message of a burst against the
// targets, without and with a webhook, and the idle window's against none.
func statementsRows(f map[string]figure) {
	for _, c := range []struct {
		name, key string
		target    float64
	}{{"statements", "no-webhook", statementsTarget}, {"stmts+hook", "webhook", statementsWebhookTarget}} {
		burst, one := f["burst "+c.key], f["message "+c.key]
		fmt.Printf("%-10s %14s %14.1f %7.2fx  (per message, %.1f commits; %s; one message alone: %.0f statements, %.0f commits in 2 s)\n",
			c.name, fmt.Sprintf("<= %.0f", c.target), burst.statements, burst.statements/c.target,
			burst.commits, burst.note, one.statements, one.commits)
	}
	idle, hooked := f["idle no-webhook"], f["idle webhook"]
	fmt.Printf("%-10s %14s %14.0f %8s  (statements in 2 idle s, %.0f commits; with the webhook %.0f, %.0f commits)\n",
		"stmts idle", "0", idle.statements, "-", idle.commits, hooked.statements, hooked.commits)
}
