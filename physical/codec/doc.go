// Package codec encodes physical plans (physical.Plan, physical.Expr) to the
// protobuf messages of rpc/plan.proto and back, so that the scheduler can
// ship stage plans to executors (rpc.TaskDefinition.plan).
//
// Decode validates what it reads — enum ranges, column indices against each
// node's input schema, arities, Arrow types and schemas — and returns a
// qerr Internal error ("codec: ...") for malformed input; it never panics.
// Arrow schemas travel as Arrow IPC schema messages, so field names,
// nullability and metadata survive the round trip.
//
// codec imports physical, rpc and qerr only (never exec or logical).
package codec
