package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/workspace"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

func newMigrateCmd() *cobra.Command {
	cfg, envErr := app.ConfigFromEnv()
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or update the database schema, then exit",
		Long: `Create or update the database schema and exit. serve migrates on start as well; run
migrate on its own to update a PostgreSQL database before rolling out new replicas.`,
		Example: `  switchboard migrate
  switchboard migrate --database-url postgres://sb@db:5432/sb?sslmode=disable`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if envErr != nil {
				return envErr
			}
			client, err := openDB(cmd.Context(), cfg.DatabaseURL)
			if err != nil {
				return err
			}
			defer client.Close()
			fmt.Fprintln(cmd.ErrOrStderr(), "schema is up to date")
			return nil
		},
	}
	databaseFlag(cmd.Flags(), &cfg.DatabaseURL)
	return cmd
}

// openDB opens and migrates the database at url.
func openDB(ctx context.Context, url string) (*ent.Client, error) {
	client, err := storage.Open(url)
	if err != nil {
		return nil, err
	}
	if err := storage.Migrate(ctx, client, url); err != nil {
		client.Close()
		return nil, err
	}
	return client, nil
}

func newKeysCmd() *cobra.Command {
	cfg, envErr := app.ConfigFromEnv()
	cmd := groupCmd("keys", "Create, list and revoke API keys",
		`Create, list and revoke the API keys of the database the server uses (--database-url,
env DATABASE_URL). A key is shown once, when it is created; the database keeps only its hash.`,
		`  switchboard keys create --workspace acme --scopes '*'
  switchboard keys list
  switchboard keys revoke key_01J…`)
	databaseFlag(cmd.PersistentFlags(), &cfg.DatabaseURL)
	open := func(ctx context.Context) (*ent.Client, error) {
		if envErr != nil {
			return nil, envErr
		}
		return openDB(ctx, cfg.DatabaseURL)
	}

	var ws, scopes, name string
	create := &cobra.Command{
		Use:   "create --workspace NAME --scopes a,b|*",
		Short: "Create an API key and print it (only the key, on one line)",
		Long: `Create an API key for a workspace (created if missing) with the given scopes, and print
the key on stdout, alone on its line. It is never shown again. "*" grants every scope.`,
		Example: `  switchboard keys create --workspace acme --scopes '*'
  KEY=$(switchboard keys create --workspace acme --scopes messages:read,messages:write --name ci)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ws == "" || scopes == "" {
				return usageError{cmd: cmd.CommandPath(), err: fmt.Errorf("--workspace and --scopes are required")}
			}
			client, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer client.Close()
			issued, err := auth.CreateKey(cmd.Context(), client, ws, splitList(scopes), name)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), issued.Key)
			return nil
		},
	}
	create.Flags().StringVar(&ws, "workspace", "", "workspace name (created if missing)")
	create.Flags().StringVar(&scopes, "scopes", "", "comma-separated scopes, or * for all")
	create.Flags().StringVar(&name, "name", "", "a label for the key")

	list := &cobra.Command{
		Use:     "list",
		Short:   "List the API keys: prefix, workspace, name, scopes, created and revoked",
		Long:    "List every API key, newest first: its id, the key's first characters, the workspace's name, its label, scopes, and when it was created and revoked.",
		Example: "  switchboard keys list\n  switchboard keys list --database-url postgres://sb@db/sb",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			client, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer client.Close()
			return listKeys(cmd.Context(), client, cmd.OutOrStdout())
		},
	}

	revoke := &cobra.Command{
		Use:   "revoke KEY|ID",
		Short: "Revoke an API key, given the key itself or its id",
		Long: `Revoke an API key, given the key itself or its id (from keys list). Servers on the
same Redis (--redis-url, env REDIS_URL) refuse it at once; others within their key cache's TTL.`,
		Example: "  switchboard keys revoke key_01J…\n  switchboard keys revoke \"$KEY\"",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			client, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer client.Close()
			k, err := auth.RevokeKey(cmd.Context(), client, args[0])
			if err != nil {
				return err
			}
			if cfg.RedisURL != "" { // servers on an embedded Redis refuse it within their key TTL
				if opt, err := redis.ParseURL(cfg.RedisURL); err == nil {
					rdb := redis.NewClient(opt)
					_ = auth.AnnounceRevoked(cmd.Context(), rdb, k.Hash)
					rdb.Close()
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s…)\n", k.ID, k.Prefix)
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// listKeys prints every key as a table, with its workspace's name.
func listKeys(ctx context.Context, client *ent.Client, w io.Writer) error {
	list, err := auth.ListKeys(ctx, client)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(list))
	for _, k := range list {
		ids = append(ids, k.WorkspaceID)
	}
	wss, err := client.Workspace.Query().Where(workspace.IDIn(ids...)).All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	names := make(map[string]string, len(wss))
	for _, ws := range wss {
		names[ws.ID] = ws.Name
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKEY\tWORKSPACE\tNAME\tSCOPES\tCREATED\tREVOKED")
	for _, k := range list {
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format(time.RFC3339)
		}
		wsName := names[k.WorkspaceID]
		if wsName == "" {
			wsName = k.WorkspaceID
		}
		fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, wsName, k.Name,
			strings.Join(k.Scopes, ","), k.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}
