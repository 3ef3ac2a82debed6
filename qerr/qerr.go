package qerr

import (
	"context"
	"errors"
	"fmt"
)

// Kind is the phase an error belongs to.
type Kind int

const (
	// Internal is a bug in Quiver: an invariant did not hold.
	Internal Kind = iota
	// Plan is an error found before running: syntax, names, types.
	Plan
	// Execution is an error found while running: division by zero, a bad cast, a corrupt file.
	Execution
	// Resources is a limit reached: memory, disk.
	Resources
	// NotImplemented is valid input Quiver does not support yet.
	NotImplemented
	// Canceled is a query stopped by its context.
	Canceled
	// IO is an error reading or writing files.
	IO
	// Unavailable is a statement that could not run because the scheduler
	// was unreachable or restarted while it ran, before it delivered any
	// row: running it again is safe and may succeed (Retryable).
	Unavailable
)

func (k Kind) String() string {
	switch k {
	case Plan:
		return "planning error"
	case Execution:
		return "execution error"
	case Resources:
		return "resources exhausted"
	case NotImplemented:
		return "not implemented"
	case Canceled:
		return "canceled"
	case IO:
		return "io error"
	case Unavailable:
		return "unavailable"
	default:
		return "internal error"
	}
}

// Error is an error of a known kind. Line and Column, when non-zero, locate
// the error in the SQL text (1-based).
type Error struct {
	Kind   Kind
	Msg    string
	Line   int
	Column int
	Err    error // the wrapped cause, may be nil
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s at line %d, column %d: %s", e.Kind, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Msg)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// newf formats the message; an argument that is itself an *Error shows
// its message without its kind, so that a wrapped error reads with one
// prefix ("planning error: Select: column ..."), not one per layer.
func newf(k Kind, format string, args ...any) error {
	for i, a := range args {
		if e, ok := a.(*Error); ok {
			args = append([]any(nil), args...) // the caller's slice stays as it was
			args[i] = bare{e}
		}
	}
	err := fmt.Errorf(format, args...)
	return &Error{Kind: k, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// Planf returns a planning error; %w in format wraps its argument.
func Planf(format string, args ...any) error { return newf(Plan, format, args...) }

// Execf returns an execution error.
func Execf(format string, args ...any) error { return newf(Execution, format, args...) }

// Resourcesf returns a resources-exhausted error.
func Resourcesf(format string, args ...any) error { return newf(Resources, format, args...) }

// Internalf returns an internal error.
func Internalf(format string, args ...any) error { return newf(Internal, format, args...) }

// NotImplementedf returns a not-implemented error.
func NotImplementedf(format string, args ...any) error { return newf(NotImplemented, format, args...) }

// IOf returns an I/O error.
func IOf(format string, args ...any) error { return newf(IO, format, args...) }

// Unavailablef returns an unavailable error: retrying the statement is safe.
func Unavailablef(format string, args ...any) error { return newf(Unavailable, format, args...) }

// Retryable reports whether the statement that failed with err may simply
// be run again (its error is Unavailable).
func Retryable(err error) bool { return Is(err, Unavailable) }

// At returns a planning error located at line and column of the SQL text.
func At(line, col int, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: Plan, Msg: err.Error(), Line: line, Column: col, Err: errors.Unwrap(err)}
}

// KindOf returns the kind of err: the kind of the outermost *Error in its
// chain, Canceled for context errors, Internal otherwise.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Canceled
	}
	return Internal
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// bare is an *Error formatted without its kind (see newf); it unwraps to it.
type bare struct{ e *Error }

func (b bare) Error() string {
	if b.e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", b.e.Line, b.e.Column, b.e.Msg)
	}
	return b.e.Msg
}

func (b bare) Unwrap() error { return b.e }
