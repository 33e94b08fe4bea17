package gateway

import (
	"context"
	"fmt"
	"log/slog"

	waLog "go.mau.fi/whatsmeow/util/log"
)

// waLogger adapts slog to whatsmeow's logger; whatsmeow's debug chatter is
// logged at slog's debug level.
type waLogger struct{ l *slog.Logger }

func (w waLogger) log(level slog.Level, msg string, args ...any) {
	if w.l.Enabled(context.Background(), level) {
		w.l.Log(context.Background(), level, fmt.Sprintf(msg, args...))
	}
}

func (w waLogger) Warnf(msg string, args ...any)  { w.log(slog.LevelWarn, msg, args...) }
func (w waLogger) Errorf(msg string, args ...any) { w.log(slog.LevelError, msg, args...) }
func (w waLogger) Infof(msg string, args ...any)  { w.log(slog.LevelInfo, msg, args...) }
func (w waLogger) Debugf(msg string, args ...any) { w.log(slog.LevelDebug, msg, args...) }
func (w waLogger) Sub(module string) waLog.Logger { return waLogger{w.l.With("module", module)} }
