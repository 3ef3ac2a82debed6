package tpch

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// money is the type of prices, discounts, taxes, balances and quantities.
var money = &arrow.Decimal128Type{Precision: 15, Scale: 2}

func field(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

var (
	i32  = arrow.PrimitiveTypes.Int32
	i64  = arrow.PrimitiveTypes.Int64
	str  = arrow.BinaryTypes.String
	date = arrow.FixedWidthTypes.Date32
)

// schemas are the Arrow schemas of the eight tables, as in
// tpch/schema.sql and the SF 0.01 Parquet files: keys INT64 (nation
// and region keys INT32), p_size and o_shippriority INT32, money DECIMAL(15,2),
// dates DATE32, text UTF8. Every column is nullable, as the files declare.
var schemas = map[string]*arrow.Schema{
	"region": arrow.NewSchema([]arrow.Field{
		field("r_regionkey", i32), field("r_name", str), field("r_comment", str),
	}, nil),
	"nation": arrow.NewSchema([]arrow.Field{
		field("n_nationkey", i32), field("n_name", str), field("n_regionkey", i32), field("n_comment", str),
	}, nil),
	"part": arrow.NewSchema([]arrow.Field{
		field("p_partkey", i64), field("p_name", str), field("p_mfgr", str), field("p_brand", str),
		field("p_type", str), field("p_size", i32), field("p_container", str), field("p_retailprice", money),
		field("p_comment", str),
	}, nil),
	"supplier": arrow.NewSchema([]arrow.Field{
		field("s_suppkey", i64), field("s_name", str), field("s_address", str), field("s_nationkey", i32),
		field("s_phone", str), field("s_acctbal", money), field("s_comment", str),
	}, nil),
	"partsupp": arrow.NewSchema([]arrow.Field{
		field("ps_partkey", i64), field("ps_suppkey", i64), field("ps_availqty", i64),
		field("ps_supplycost", money), field("ps_comment", str),
	}, nil),
	"customer": arrow.NewSchema([]arrow.Field{
		field("c_custkey", i64), field("c_name", str), field("c_address", str), field("c_nationkey", i32),
		field("c_phone", str), field("c_acctbal", money), field("c_mktsegment", str), field("c_comment", str),
	}, nil),
	"orders": arrow.NewSchema([]arrow.Field{
		field("o_orderkey", i64), field("o_custkey", i64), field("o_orderstatus", str), field("o_totalprice", money),
		field("o_orderdate", date), field("o_orderpriority", str), field("o_clerk", str),
		field("o_shippriority", i32), field("o_comment", str),
	}, nil),
	"lineitem": arrow.NewSchema([]arrow.Field{
		field("l_orderkey", i64), field("l_partkey", i64), field("l_suppkey", i64), field("l_linenumber", i64),
		field("l_quantity", money), field("l_extendedprice", money), field("l_discount", money), field("l_tax", money),
		field("l_returnflag", str), field("l_linestatus", str), field("l_shipdate", date), field("l_commitdate", date),
		field("l_receiptdate", date), field("l_shipinstruct", str), field("l_shipmode", str), field("l_comment", str),
	}, nil),
}

// Schema returns the Arrow schema of TPC-H table name, or nil for an unknown name.
func Schema(name string) *arrow.Schema { return schemas[strings.ToLower(name)] }

// CheckSchema reports whether got has table's column names and types, in
// order. Nullability and field metadata are not compared: writers differ there.
func CheckSchema(table string, got *arrow.Schema) error {
	want := Schema(table)
	if want == nil {
		return qerr.Planf("tpch: unknown table %q", table)
	}
	if got.NumFields() != want.NumFields() {
		return qerr.Planf("tpch: table %s has %d columns, want %d (%s)", table, got.NumFields(), want.NumFields(), columnList(want))
	}
	for i, w := range want.Fields() {
		g := got.Field(i)
		if !strings.EqualFold(g.Name, w.Name) || !arrow.TypeEqual(g.Type, w.Type) {
			return qerr.Planf("tpch: table %s column %d is %s %s, want %s %s", table, i+1, g.Name, g.Type, w.Name, w.Type)
		}
	}
	return nil
}

func columnList(s *arrow.Schema) string {
	parts := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		parts[i] = f.Name + " " + f.Type.String()
	}
	return strings.Join(parts, ", ")
}
