package codec

import (
	"google.golang.org/protobuf/proto"
)

// Plans arrive from clients nobody vouches for; these bounds keep what a
// small message can make the decoder (and the scheduler after it) allocate
// proportional to the message.

// MaxPartitions bounds a partition count read from a plan: counts are not
// backed by bytes of the message, so a forged one would allocate that many
// partitions.
const MaxPartitions = 1 << 16

// MaxWireDepth bounds the nesting of plan and expression messages. It is
// above protobuf's default (10,000) so that an expression as deep as
// logical.MaxExprDepth (two messages per level) still travels; decoding
// recurses once per level.
const MaxWireDepth = 1 << 17

func unmarshal(b []byte, m proto.Message) error {
	return proto.UnmarshalOptions{RecursionLimit: MaxWireDepth}.Unmarshal(b, m)
}
