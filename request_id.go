package quiver

import (
	"errors"
	"fmt"
	"io"
)

// requestError is a failed query's error with the request id its calls to
// the scheduler carried (rpc.RequestIDHeader), the id the scheduler's and
// the executors' log lines about the query name. Error() is the wrapped
// error's message unchanged; the verbose form (%+v) adds the id.
type requestError struct {
	err error
	id  string
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

func (e *requestError) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		fmt.Fprintf(f, "%+v\nrequest id: %s", e.err, e.id)
		return
	}
	io.WriteString(f, e.err.Error())
}

// withRequestID attaches id to err (nil stays nil).
func withRequestID(err error, id string) error {
	if err == nil {
		return nil
	}
	return &requestError{err: err, id: id}
}

// RequestIDOf returns the request id of the query that err is the failure
// of, or "" when err did not come from a query sent to a scheduler. Search
// the scheduler's and executors' logs for it (key request_id).
func RequestIDOf(err error) string {
	var re *requestError
	if errors.As(err, &re) {
		return re.id
	}
	return ""
}
