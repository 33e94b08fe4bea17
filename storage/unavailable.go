package storage

import (
	"context"
	stdsql "database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard"
)

// IsUnavailable reports whether err says the database cannot be reached or is not
// taking work right now (a lost connection, a restart, too many clients, a
// deadlock, a busy SQLite file), as opposed to an error in what was asked of it.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 40: transaction rollback (a deadlock or
		// a serialization failure: the same work succeeds when tried again);
		// 53: insufficient resources; 57P01-57P03: admin shutdown, crash shutdown,
		// cannot connect now.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "40") ||
			strings.HasPrefix(pgErr.Code, "53") ||
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, stdsql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	msg := err.Error()
	for _, s := range []string{"conn closed", "connection reset", "broken pipe", "connection refused",
		"database is locked", "SQLITE_BUSY", "sql: database is closed", "failed to connect", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// classify marks an unavailable-database error with switchboard.ErrUnavailable so
// that every layer above answers it as a retryable 503.
func classify(err error) error {
	if err == nil || errors.Is(err, switchboard.ErrUnavailable) || !IsUnavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", switchboard.ErrUnavailable, err)
}

// classifyingDriver is the ent driver with its errors classified.
type classifyingDriver struct {
	drv interface {
		dialect.Driver
		BeginTx(context.Context, *stdsql.TxOptions) (dialect.Tx, error)
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
		QueryContext(context.Context, string, ...any) (*stdsql.Rows, error)
	}
}

func (d classifyingDriver) Exec(ctx context.Context, query string, args, v any) error {
	return classify(d.drv.Exec(ctx, query, args, v))
}

func (d classifyingDriver) Query(ctx context.Context, query string, args, v any) error {
	return classify(d.drv.Query(ctx, query, args, v))
}

func (d classifyingDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	return d.BeginTx(ctx, nil)
}

func (d classifyingDriver) BeginTx(ctx context.Context, opts *stdsql.TxOptions) (dialect.Tx, error) {
	tx, err := d.drv.BeginTx(ctx, opts)
	if err != nil {
		return nil, classify(err)
	}
	if d.drv.Dialect() == dialect.Postgres {
		if err := setLocal(ctx, tx); err != nil {
			_ = tx.Rollback()
			return nil, classify(err)
		}
	}
	return classifyingTx{tx}, nil
}

func (d classifyingDriver) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	res, err := d.drv.ExecContext(ctx, query, args...)
	return res, classify(err)
}

func (d classifyingDriver) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	rows, err := d.drv.QueryContext(ctx, query, args...)
	return rows, classify(err)
}

func (d classifyingDriver) Close() error    { return d.drv.Close() }
func (d classifyingDriver) Dialect() string { return d.drv.Dialect() }

// classifyingTx is a transaction with its errors classified.
type classifyingTx struct{ tx dialect.Tx }

func (t classifyingTx) Exec(ctx context.Context, query string, args, v any) error {
	return classify(t.tx.Exec(ctx, query, args, v))
}

func (t classifyingTx) Query(ctx context.Context, query string, args, v any) error {
	return classify(t.tx.Query(ctx, query, args, v))
}

func (t classifyingTx) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	ex, ok := t.tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	})
	if !ok {
		return nil, errors.New("storage: ExecContext is not supported")
	}
	res, err := ex.ExecContext(ctx, query, args...)
	return res, classify(err)
}

func (t classifyingTx) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	q, ok := t.tx.(interface {
		QueryContext(context.Context, string, ...any) (*stdsql.Rows, error)
	})
	if !ok {
		return nil, errors.New("storage: QueryContext is not supported")
	}
	rows, err := q.QueryContext(ctx, query, args...)
	return rows, classify(err)
}

func (t classifyingTx) Commit() error   { return classify(t.tx.Commit()) }
func (t classifyingTx) Rollback() error { return classify(t.tx.Rollback()) }
