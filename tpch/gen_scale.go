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

// dbgenDist mirrors the dbgen port's distribution (a weighted list of
// words or codes) field for field.
type dbgenDist struct {
	count   int
	max     int32
	members []struct {
		weight int64
		text   string
	}
	permute []int64
}

// The dbgen port's distributions. Its initialisation appends to them and
// adds to their running weight without emptying them first, so a second
// initialisation in one process doubles every list and draws different
// rows; initDbgen empties them first.
var (
	//go:linkname dbgenNations github.com/pingcap/go-tpc/tpch/dbgen.nations
	dbgenNations dbgenDist
	//go:linkname dbgenRegions github.com/pingcap/go-tpc/tpch/dbgen.regions
	dbgenRegions dbgenDist
	//go:linkname dbgenOPriority github.com/pingcap/go-tpc/tpch/dbgen.oPrioritySet
	dbgenOPriority dbgenDist
	//go:linkname dbgenLInstruct github.com/pingcap/go-tpc/tpch/dbgen.lInstructSet
	dbgenLInstruct dbgenDist
	//go:linkname dbgenLSmode github.com/pingcap/go-tpc/tpch/dbgen.lSmodeSet
	dbgenLSmode dbgenDist
	//go:linkname dbgenLCategory github.com/pingcap/go-tpc/tpch/dbgen.lCategorySet
	dbgenLCategory dbgenDist
	//go:linkname dbgenLRflag github.com/pingcap/go-tpc/tpch/dbgen.lRflagSet
	dbgenLRflag dbgenDist
	//go:linkname dbgenCMseg github.com/pingcap/go-tpc/tpch/dbgen.cMsegSet
	dbgenCMseg dbgenDist
	//go:linkname dbgenColors github.com/pingcap/go-tpc/tpch/dbgen.colors
	dbgenColors dbgenDist
	//go:linkname dbgenPTypes github.com/pingcap/go-tpc/tpch/dbgen.pTypesSet
	dbgenPTypes dbgenDist
	//go:linkname dbgenPCntr github.com/pingcap/go-tpc/tpch/dbgen.pCntrSet
	dbgenPCntr dbgenDist
	//go:linkname dbgenArticles github.com/pingcap/go-tpc/tpch/dbgen.articles
	dbgenArticles dbgenDist
	//go:linkname dbgenNouns github.com/pingcap/go-tpc/tpch/dbgen.nouns
	dbgenNouns dbgenDist
	//go:linkname dbgenAdjectives github.com/pingcap/go-tpc/tpch/dbgen.adjectives
	dbgenAdjectives dbgenDist
	//go:linkname dbgenAdverbs github.com/pingcap/go-tpc/tpch/dbgen.adverbs
	dbgenAdverbs dbgenDist
	//go:linkname dbgenPrepositions github.com/pingcap/go-tpc/tpch/dbgen.prepositions
	dbgenPrepositions dbgenDist
	//go:linkname dbgenVerbs github.com/pingcap/go-tpc/tpch/dbgen.verbs
	dbgenVerbs dbgenDist
	//go:linkname dbgenTerminators github.com/pingcap/go-tpc/tpch/dbgen.terminators
	dbgenTerminators dbgenDist
	//go:linkname dbgenAuxillaries github.com/pingcap/go-tpc/tpch/dbgen.auxillaries
	dbgenAuxillaries dbgenDist
	//go:linkname dbgenNP github.com/pingcap/go-tpc/tpch/dbgen.np
	dbgenNP dbgenDist
	//go:linkname dbgenVP github.com/pingcap/go-tpc/tpch/dbgen.vp
	dbgenVP dbgenDist
	//go:linkname dbgenGrammar github.com/pingcap/go-tpc/tpch/dbgen.grammar
	dbgenGrammar dbgenDist
)

// dbgenDists are the distributions dbgen's initialisation fills.
var dbgenDists = []*dbgenDist{&dbgenNations, &dbgenRegions, &dbgenOPriority, &dbgenLInstruct,
	&dbgenLSmode, &dbgenLCategory, &dbgenLRflag, &dbgenCMseg, &dbgenColors, &dbgenPTypes,
	&dbgenPCntr, &dbgenArticles, &dbgenNouns, &dbgenAdjectives, &dbgenAdverbs, &dbgenPrepositions,
	&dbgenVerbs, &dbgenTerminators, &dbgenAuxillaries, &dbgenNP, &dbgenVP, &dbgenGrammar}

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

// initDbgen initialises dbgen at sc, the same way however many times it
// ran before in this process: at its integer scale and, for a
// fraction, with the scaled tables' bases cut and the key ranges derived
// from them at initialisation (customer keys of orders, part keys of lines)
// worked out again. The caller holds genMu.
func initDbgen(sc scale) error {
	for _, d := range dbgenDists {
		*d = dbgenDist{}
	}
	dbgen.InitDbGen(sc.n)
	if dbgenNations.count != 25 || len(dbgenNations.members) != 25 {
		return qerr.Internalf("tpch gen: the dbgen module's distributions are not laid out as expected; generating needs its pinned version")
	}
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
