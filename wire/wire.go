// Package wire holds what the logical and physical plan codecs share: the
// bounds that keep what a small message can make a decoder allocate
// proportional to the message, protobuf (un)marshalling under those
// bounds with errors in the codecs' terms, the recovery that turns a
// decoder's panic into an error, and the list helper both use for every
// repeated field. Plans arrive from clients (logical) and from whoever
// calls an executor's LaunchTasks (physical): nobody vouches for them.
package wire

import (
	"github.com/quiverdb/quiver/qerr"
	"google.golang.org/protobuf/proto"
)

// MaxPartitions bounds a partition count read from a plan: counts are not
// backed by bytes of the message, and operators allocate per partition.
const MaxPartitions = 1 << 16

// MaxDepth bounds the nesting of plan and expression messages. It is above
// protobuf's default (10,000) so that an expression as deep as
// logical.MaxExprDepth (two messages per level) still travels; decoding
// recurses once per level.
const MaxDepth = 1 << 17

// Marshal encodes m; what names it in an error ("logical plan").
func Marshal(m proto.Message, what string) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, qerr.Internalf("codec: marshal %s: %w", what, err)
	}
	return b, nil
}

// Unmarshal decodes b into m, nested at most MaxDepth deep; what names it
// in an error.
func Unmarshal(b []byte, m proto.Message, what string) error {
	if err := (proto.UnmarshalOptions{RecursionLimit: MaxDepth}).Unmarshal(b, m); err != nil {
		return qerr.Internalf("codec: unmarshal %s: %w", what, err)
	}
	return nil
}

// Recover turns a panic during decoding (a malformed plan that slipped past
// validation) into an Internal error in *err. Every exported decoder defers
// it.
func Recover(err *error) {
	if r := recover(); r != nil {
		*err = qerr.Internalf("codec: malformed input: %v", r)
	}
}

// Map converts each element of xs with f, stopping at the first error; a
// nil slice stays nil (an absent repeated field and an empty one differ in
// some plans).
func Map[T, M any](xs []T, f func(T) (M, error)) ([]M, error) {
	if xs == nil {
		return nil, nil
	}
	out := make([]M, len(xs))
	for i, x := range xs {
		m, err := f(x)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}
