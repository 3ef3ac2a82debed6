package codec

import (
	"google.golang.org/protobuf/proto"
)

// Stage plans are decoded by executors from whoever called LaunchTasks;
// these bounds keep what a small message can make the decoder (and the
// task run after it) allocate proportional to the message.

// MaxPartitions bounds a partition count read from a plan (repartition,
// shuffle writer, unresolved shuffle): counts are not backed by bytes of
// the message, and operators allocate per partition.
const MaxPartitions = 1 << 16

// MaxWireDepth bounds the nesting of plan and expression messages; it is
// above protobuf's default (10,000) so that deep expressions still travel.
const MaxWireDepth = 1 << 17

func unmarshal(b []byte, m proto.Message) error {
	return proto.UnmarshalOptions{RecursionLimit: MaxWireDepth}.Unmarshal(b, m)
}
