package quiver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	"github.com/quiverdb/quiver/arrowpb"
	logicalcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/logical/optimizer"
	physicalcodec "github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/physical/stage"
	"github.com/quiverdb/quiver/rpc"
)

// TestWriteFuzzSeeds regenerates the committed seed corpora of the plan
// decoders' fuzz targets from real plans: the optimized logical plans and
// the stage plans of some TPC-H queries, plus the hostile inputs that once
// crashed a server. It runs only with QUIVER_WRITE_FUZZ_SEEDS=1:
//
//	QUIVER_WRITE_FUZZ_SEEDS=1 go test -run TestWriteFuzzSeeds .
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("QUIVER_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set QUIVER_WRITE_FUZZ_SEEDS=1 to regenerate the fuzz seed corpora")
	}
	ctx := context.Background()
	s := newTPCHSession(t)
	logicalDir := filepath.Join("logical", "codec", "testdata", "fuzz", "FuzzDecode")
	physicalDir := filepath.Join("physical", "codec", "testdata", "fuzz", "FuzzDecode")
	for _, q := range []int{1, 3, 5, 13, 18, 22} {
		text, err := os.ReadFile(filepath.Join("tpch", "queries", fmt.Sprintf("q%02d.sql", q)))
		if err != nil {
			t.Fatal(err)
		}
		df, err := s.SQL(ctx, string(text))
		if err != nil {
			t.Fatal(err)
		}
		lp, err := optimizer.New().Optimize(ctx, df.LogicalPlan(), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := logicalcodec.Encode(lp)
		if err != nil {
			t.Fatal(err)
		}
		writeSeed(t, logicalDir, fmt.Sprintf("tpch_q%02d", q), b)
		pp, err := planner.New(planner.Config{TargetPartitions: 2}).Plan(ctx, lp)
		if err != nil {
			t.Fatal(err)
		}
		g, err := stage.Split("job-1", pp, stage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range g.Stages {
			b, err := physicalcodec.Encode(st.Plan)
			if err != nil {
				t.Fatal(err)
			}
			writeSeed(t, physicalDir, fmt.Sprintf("tpch_q%02d_stage%d", q, st.ID), b)
		}
	}

	// The crash of issue 20: a schema whose field count is forged.
	schema, err := arrowpb.EncodeSchema(arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	forged := append([]byte(nil), schema...)
	binary.LittleEndian.PutUint32(forged[fieldCountPos(t, forged):], 0xFFFFFFF0)
	scan := &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Scan{Scan: &rpc.LogicalScan{Table: &rpc.TableDef{Name: "t", Schema: forged, Format: "parquet"}}}}
	writeSeed(t, logicalDir, "crash_forged_field_count", marshal(t, scan))
	mem := &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Scan{Scan: &rpc.LogicalScan{Table: &rpc.TableDef{Name: "t", Schema: schema, Format: "memory", MemoryPartitions: 0x7FFFFFFF}}}}
	writeSeed(t, logicalDir, "crash_memory_partitions", marshal(t, mem))
	values := &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Values{Values: &rpc.PhysicalValues{Schema: forged}}}
	writeSeed(t, physicalDir, "crash_forged_field_count", marshal(t, values))
	good := &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Values{Values: &rpc.PhysicalValues{Schema: schema}}}
	huge := &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_ShuffleWriter{ShuffleWriter: &rpc.PhysicalShuffleWriter{Input: good, JobId: "j", N: 0x7FFFFFFF}}}
	writeSeed(t, physicalDir, "crash_shuffle_partitions", marshal(t, huge))
	writeSeed(t, filepath.Join("arrowpb", "testdata", "fuzz", "FuzzDecodeSchema"), "crash_forged_field_count", forged)
	nested, err := arrowpb.EncodeSchema(arrow.NewSchema([]arrow.Field{
		{Name: "l", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}))},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}, nil))
	if err != nil {
		t.Fatal(err)
	}
	writeSeed(t, filepath.Join("arrowpb", "testdata", "fuzz", "FuzzDecodeSchema"), "nested", nested)

	// Types and literals as plans carry them, and one whose type is the
	// forged schema.
	typeDir := filepath.Join("arrowpb", "testdata", "fuzz", "FuzzDecodeType")
	litDir := filepath.Join("arrowpb", "testdata", "fuzz", "FuzzDecodeLiteral")
	for name, typ := range map[string]arrow.DataType{
		"decimal": &arrow.Decimal128Type{Precision: 15, Scale: 2}, "date": arrow.FixedWidthTypes.Date32,
		"timestamp": &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Paris"}, "list": arrow.ListOf(arrow.BinaryTypes.String),
	} {
		m, err := arrowpb.EncodeType(typ)
		if err != nil {
			t.Fatal(err)
		}
		writeSeed(t, typeDir, name, marshal(t, m))
	}
	writeSeed(t, typeDir, "crash_forged_field_count", marshal(t, &rpc.ArrowType{Id: int32(arrow.LIST), Field: forged}))
	for name, lit := range map[string]*rpc.Literal{
		"int64":    {Type: &rpc.ArrowType{Id: int32(arrow.INT64)}, Value: &rpc.Literal_Int64Value{Int64Value: 42}},
		"string":   {Type: &rpc.ArrowType{Id: int32(arrow.STRING)}, Value: &rpc.Literal_StringValue{StringValue: "MAIL"}},
		"decimal":  {Type: &rpc.ArrowType{Id: int32(arrow.DECIMAL128), Precision: 12, Scale: 2}, Value: &rpc.Literal_DecimalValue{DecimalValue: &rpc.Decimal128Value{Lo: 5}}},
		"interval": {Type: &rpc.ArrowType{Id: int32(arrow.INTERVAL_MONTH_DAY_NANO)}, Value: &rpc.Literal_IntervalValue{IntervalValue: &rpc.IntervalValue{Days: 90}}},
		"null":     {Type: &rpc.ArrowType{Id: int32(arrow.DATE32)}},
	} {
		writeSeed(t, litDir, name, marshal(t, lit))
	}

	// Flight tickets: a real one, traversal attempts, garbage.
	ticketDir := filepath.Join("executor", "testdata", "fuzz", "FuzzFlightTicket")
	writeSeed(t, ticketDir, "valid", marshal(t, &rpc.PartitionLocation{JobId: "job-1", StageId: 2, OutputPartition: 3, MapPartition: 1}))
	writeSeed(t, ticketDir, "traversal", marshal(t, &rpc.PartitionLocation{JobId: "../../etc", StageId: 1}))
	writeSeed(t, ticketDir, "negative", marshal(t, &rpc.PartitionLocation{JobId: "j", StageId: -1, MapPartition: -7}))
	writeSeed(t, ticketDir, "garbage", []byte{0xff, 0xff, 0xff, 0x0f})

	// REST requests: method, path, body.
	restDir := filepath.Join("scheduler", "testdata", "fuzz", "FuzzREST")
	for name, r := range map[string][3]string{
		"jobs": {"GET", "/api/jobs", ""}, "job": {"GET", "/api/job/nope", ""}, "caches": {"GET", "/api/caches", ""},
		"post": {"POST", "/api/jobs", `{"sql": "SELECT 1"}`}, "traversal": {"GET", "/api/job/..%2F..%2Fetc", ""},
	} {
		text := "go test fuzz v1\nstring(" + strconv.Quote(r[0]) + ")\nstring(" + strconv.Quote(r[1]) + ")\n[]byte(" + strconv.Quote(r[2]) + ")\n"
		if err := os.MkdirAll(restDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(restDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeSeed writes b as a corpus file of go test -fuzz.
func writeSeed(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fieldCountPos finds the length word of the fields vector in IPC schema
// bytes (continuation, length, then the flatbuffer Message whose header is
// the Schema table; fields are the Schema's second slot).
func fieldCountPos(t *testing.T, b []byte) int {
	t.Helper()
	fb := b[8:]
	u32 := func(p int) int { return int(binary.LittleEndian.Uint32(fb[p:])) }
	u16 := func(p int) int { return int(binary.LittleEndian.Uint16(fb[p:])) }
	// slot returns the position of the object the offset field at slot points at.
	slot := func(tab, s int) int {
		vt := tab - int(int32(u32(tab)))
		off := u16(vt + s)
		if off == 0 {
			t.Fatalf("slot %d absent", s)
		}
		return tab + off + u32(tab+off)
	}
	root := u32(0)
	schema := slot(root, 8)
	return 8 + slot(schema, 6)
}
