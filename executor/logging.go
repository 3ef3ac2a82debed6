package executor

import "log/slog"

// loggerT is a thin wrapper so call sites stay short.
type loggerT struct{ l *slog.Logger }

func (l loggerT) info(msg string, args ...any) { l.l.Info(msg, args...) }

func (l loggerT) warn(msg string, err error, args ...any) {
	l.l.Warn(msg, append([]any{"err", err}, args...)...)
}

func (l loggerT) error(msg string, err error, args ...any) {
	l.l.Error(msg, append([]any{"err", err}, args...)...)
}
