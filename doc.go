// Package quiver is Quiver's public Go API: sessions that run SQL and
// DataFrames over Arrow, with tables registered from Parquet, CSV, Arrow IPC
// or in-memory record batches.
//
//	s, err := quiver.NewSession(ctx)
//	defer s.Close()
//	df, err := s.SQL(ctx, "SELECT 1 + 1 AS two")
//	batches, err := df.Collect(ctx)
//
// The root package wires the layers together: sql (statements to logical
// plans), logical/optimizer, physical/planner and exec. It imports
// everything below it and nothing imports it but cmd/quiver and tpch.
package quiver
