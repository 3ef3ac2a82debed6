package tpch

import (
	"math"
	_ "unsafe" // go:linkname

	"github.com/pingcap/go-tpc/tpch/dbgen"
	"github.com/quiverdb/quiver/qerr"
)

// Fractional scale factors. The dbgen port takes only an integer scale and
// keeps the per-table base row counts it multiplies by in package state.
// The reference dbgen makes a scale factor below 1 by running at scale 1
// with each scaled table's base cut to the same fraction (in thousandths,
// at least one row), so the generator here reaches those variables by name
// (go:linkname, checked against the pinned module version by the tests that
// compare SF 0.01 with the repository's reference data) and does the same.

// dbgenTDef mirrors the dbgen port's table definition field for field; only
// base is written.
type dbgenTDef struct {
	name    string
	comment string
	base    int64
	loader  dbgen.Loader
	genSeed func(dbgen.Table, int64)
	child   dbgen.Table
	vTotal  int64
}

//go:linkname dbgenTDefs github.com/pingcap/go-tpc/tpch/dbgen.tDefs
var dbgenTDefs []dbgenTDef

//go:linkname dbgenCustKeyMax github.com/pingcap/go-tpc/tpch/dbgen.ockeyMax
var dbgenCustKeyMax int64

//go:linkname dbgenPartKeyMax github.com/pingcap/go-tpc/tpch/dbgen.LPkeyMax
var dbgenPartKeyMax int64

// scale is a checked scale factor: dbgen's integer scale and, below 1, the
// fraction in thousandths that cuts the scaled tables' bases (0: none).
type scale struct {
	n           int64
	thousandths int64
}

// parseSF checks sf: an integer of at least 1, or a positive multiple of
// 0.001 below 1.
func parseSF(sf float64) (scale, error) {
	switch {
	case math.IsNaN(sf) || sf <= 0:
		return scale{}, qerr.Planf("tpch gen: scale factor must be positive, got %v", sf)
	case sf >= 1:
		if sf != math.Trunc(sf) || sf > 100_000 {
			return scale{}, qerr.Planf("tpch gen: a scale factor of 1 or more must be an integer up to 100000, got %v", sf)
		}
		return scale{n: int64(sf)}, nil
	}
	k := math.Round(sf * 1000)
	if k < 1 || math.Abs(sf*1000-k) > 1e-6 {
		return scale{}, qerr.Planf("tpch gen: a scale factor below 1 must be a multiple of 0.001 (as dbgen's), got %v", sf)
	}
	return scale{n: 1, thousandths: int64(k)}, nil
}

// base is a scaled table's row count (per order for lineitem) at scale 1
// after the fraction's cut.
func (sc scale) base(spec int64) int64 {
	if sc.thousandths == 0 {
		return spec
	}
	return max(1, spec*sc.thousandths/1000)
}

// rows is the number of generator rows (parts, orders, ...) of a table that
// scales: its base times the integer scale.
func (sc scale) rows(spec int64) int64 { return sc.base(spec) * sc.n }

// initDbgen initialises dbgen at sc: at its integer scale and, for a
// fraction, with the scaled tables' bases cut and the key ranges derived
// from them at initialisation (customer keys of orders, part keys of lines)
// worked out again. The caller holds genMu.
func initDbgen(sc scale) error {
	dbgen.InitDbGen(sc.n)
	if sc.thousandths == 0 {
		return nil
	}
	if len(dbgenTDefs) <= int(dbgen.TPartPsupp) || dbgenTDefs[dbgen.TCust].base != 150_000 || dbgenTDefs[dbgen.TPart].base != 200_000 {
		return qerr.Internalf("tpch gen: the dbgen module's tables are not laid out as expected; fractional scale factors need its pinned version")
	}
	for t := dbgen.TPart; t < dbgen.TNation; t++ {
		dbgenTDefs[t].base = sc.base(dbgenTDefs[t].base)
	}
	dbgenCustKeyMax = dbgenTDefs[dbgen.TCust].base * sc.n
	dbgenPartKeyMax = dbgenTDefs[dbgen.TPart].base * sc.n
	return nil
}
