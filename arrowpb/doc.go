// Package arrowpb owns the protobuf encoding of Arrow data types, schemas
// and literal values that both plan codecs (logical/codec, physical/codec)
// share, so the two cannot drift apart.
//
// arrowpb imports rpc, qerr and Arrow only.
package arrowpb
