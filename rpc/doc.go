// Package rpc owns Quiver's wire protocol: the .proto files of the scheduler
// and executor services and of encoded plans, and the protobuf/gRPC Go code
// generated from them (regenerate with gen.sh or go generate), and the
// request id every call carries in its metadata (requestid.go).
//
// rpc imports only protobuf and gRPC, nothing of ours.
package rpc

//go:generate ./gen.sh

// ProtocolVersion is the wire protocol version checked at executor
// registration and session creation. 2: TaskDefinition.all_partitions
// (an executor that ignored it would run only partition 0 of a whole stage).
// 3: signed Flight tickets (PartitionLocation.ticket, the registration's
// ticket_key): an older executor or client cannot read or present them.
// 4: window frames with interval and fractional RANGE offsets (an older
// executor would read them as integer offsets and answer wrongly) and the
// shared WITH query node (LogicalPlan.cte_ref).
const ProtocolVersion = 4
