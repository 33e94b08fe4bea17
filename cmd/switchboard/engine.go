package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage"
)

// engineCmd runs an engine out of process over the engine protocol:
//
//	switchboard engine sandbox --server URL --token T [--phone +15550001111] [--database-url URL] [--ack-delay 1s]
func engineCmd(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "sandbox" {
		return errors.New("engine: want sandbox (switchboard engine sandbox --server URL --token T)")
	}
	fs := flag.NewFlagSet("engine sandbox", flag.ContinueOnError)
	server := fs.String("server", os.Getenv("SWITCHBOARD_SERVER"), "the server's base URL, e.g. http://127.0.0.1:8080 (env SWITCHBOARD_SERVER)")
	token := fs.String("token", os.Getenv("SWITCHBOARD_ENGINE_TOKEN"), "the engine token POST /v1/engines gave (env SWITCHBOARD_ENGINE_TOKEN)")
	dbURL := fs.String("database-url", envOr("SWITCHBOARD_ENGINE_DATABASE_URL", "sqlite://switchboard-engine.db"),
		"where the sandbox network keeps its memory (env SWITCHBOARD_ENGINE_DATABASE_URL)")
	delay := fs.Duration("ack-delay", time.Second, "spacing of the sandbox's acks")
	phone := fs.String("phone", os.Getenv("SWITCHBOARD_ENGINE_PHONE"),
		"the simulated account's own number, E.164 (+15550001111), so that two sandboxes can serve one workspace (env SWITCHBOARD_ENGINE_PHONE)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *server == "" || *token == "" {
		return errors.New("engine sandbox: --server and --token are required")
	}
	if *phone != "" && !remote.ValidPhone(*phone) {
		return fmt.Errorf("engine sandbox: --phone %q is not an E.164 number such as +15550001111", *phone)
	}
	logger, err := newLogger(stderr, *logLevel, "text")
	if err != nil {
		return err
	}
	db, err := storage.Open(*dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := storage.Migrate(ctx, db, *dbURL); err != nil {
		return err
	}
	c := &remote.Client{URL: *server, Token: *token, Phone: *phone, Logger: logger}
	logger.Info("sandbox engine connecting", "server", *server, "token", redactToken(*token), "phone", *phone)
	err = sandbox.ServeRemote(ctx, c, db, *delay)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("engine sandbox: %w", err)
}

func redactToken(t string) string {
	if len(t) <= 14 {
		return "****"
	}
	return t[:14] + "…"
}
