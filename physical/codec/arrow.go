package codec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/rpc"
)

// EncodeType encodes an Arrow data type (see arrowpb).
func EncodeType(t arrow.DataType) (*rpc.ArrowType, error) { return arrowpb.EncodeType(t) }

// DecodeType decodes an Arrow data type.
func DecodeType(m *rpc.ArrowType) (arrow.DataType, error) { return arrowpb.DecodeType(m) }

// EncodeSchema encodes an Arrow schema as IPC schema bytes.
func EncodeSchema(s *arrow.Schema) ([]byte, error) { return arrowpb.EncodeSchema(s) }

// DecodeSchema decodes IPC schema bytes.
func DecodeSchema(b []byte) (*arrow.Schema, error) { return arrowpb.DecodeSchema(b) }

func encodeLiteral(t arrow.DataType, value any) (*rpc.Literal, error) {
	return arrowpb.EncodeLiteral(t, value)
}

func decodeLiteral(m *rpc.Literal) (arrow.DataType, any, error) { return arrowpb.DecodeLiteral(m) }
