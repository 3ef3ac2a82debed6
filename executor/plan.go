package executor

import (
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/qerr"
)

// decodeStage decodes a TaskDefinition's plan, which must be a stage: a
// *physical.ShuffleWriter root.
func decodeStage(b []byte) (*physical.ShuffleWriter, error) {
	p, err := codec.Decode(b)
	if err != nil {
		return nil, qerr.Internalf("executor: decoding task plan: %w", err)
	}
	w, ok := p.(*physical.ShuffleWriter)
	if !ok {
		return nil, qerr.Internalf("executor: task plan root is %T, want a ShuffleWriter", p)
	}
	return w, nil
}
