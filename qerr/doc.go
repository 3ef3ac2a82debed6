// Package qerr owns Quiver's error kinds: every error that leaves a package
// carries the phase it came from (plan, execution, resources, internal, not
// implemented, canceled, io) so callers and tests can branch on the kind with
// errors.As instead of matching message text. One kind, unavailable, says
// the statement may simply be run again (Retryable).
//
// qerr is a leaf: it imports nothing of ours.
package qerr
