// Package tpch owns Quiver's TPC-H kit: the SF 0.01 demo tables embedded in
// the binary, the 22 queries, and checking results against answer files.
//
// tpch imports the root quiver package (and format); nothing imports tpch
// but cmd/quiver and tests.
package tpch
