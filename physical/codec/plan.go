package codec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/wire"
)

// Encode serialises a physical plan (rpc.PhysicalPlan).
func Encode(p physical.Plan) ([]byte, error) {
	m, err := EncodePlan(p)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(m, "physical plan")
}

// Decode parses and validates a plan made by Encode. Malformed input is a
// qerr Internal error, never a panic.
func Decode(b []byte) (p physical.Plan, err error) {
	defer wire.Recover(&err)
	var m rpc.PhysicalPlan
	if err := wire.Unmarshal(b, &m, "physical plan"); err != nil {
		return nil, err
	}
	return DecodePlan(&m)
}

// EncodePlan converts a plan to its protobuf message (for callers that embed
// plans in messages of their own).
func EncodePlan(p physical.Plan) (*rpc.PhysicalPlan, error) { return encodePlan(p) }

// DecodePlan converts and validates a protobuf plan message; it never panics.
func DecodePlan(m *rpc.PhysicalPlan) (p physical.Plan, err error) {
	defer wire.Recover(&err)
	p, err = decodePlan(m)
	if err != nil {
		return nil, err
	}
	probe(p)
	return p, nil
}

// probe calls every node's derived methods so that a plan that would panic
// later panics here, inside Decode's recover.
func probe(p physical.Plan) {
	_ = p.Schema()
	_ = p.OutputPartitions()
	_ = p.String()
	for _, c := range p.Children() {
		probe(c)
	}
}

// EncodeLocation converts a shuffle file location to its wire form.
func EncodeLocation(l physical.PartitionLocation) *rpc.PartitionLocation {
	return &rpc.PartitionLocation{
		JobId:           l.JobID,
		StageId:         int32(l.StageID),
		OutputPartition: int32(l.OutputPartition),
		MapPartition:    int32(l.MapPartition),
		Executor: &rpc.ExecutorMeta{
			Id:         l.Executor.ID,
			Host:       l.Executor.Host,
			GrpcPort:   int32(l.Executor.FlightPort),
			FlightPort: int32(l.Executor.FlightPort),
		},
		Rows:     l.Rows,
		Batches:  l.Batches,
		Bytes:    l.Bytes,
		Ticket:   []byte(l.Ticket),
		ColStats: EncodeColumnStats(l.Stats),
		Inline:   l.Inline,
	}
}

// EncodeColumnStats converts a cache file's column statistics to their
// wire form.
func EncodeColumnStats(cols []physical.ColumnStats) []*rpc.ColumnStats {
	var out []*rpc.ColumnStats
	for _, c := range cols {
		out = append(out, &rpc.ColumnStats{Bounded: c.Bounded, Lo: c.Lo, Hi: c.Hi, NoNulls: c.NoNulls,
			LongestAtLeast: int64(c.LongestAtLeast), Distinct: c.Distinct})
	}
	return out
}

// DecodeColumnStats converts and checks wire column statistics (bounds in
// order, nothing negative); nil for none.
func DecodeColumnStats(ms []*rpc.ColumnStats) ([]physical.ColumnStats, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := make([]physical.ColumnStats, len(ms))
	for i, c := range ms {
		if c == nil || (c.Bounded && c.Lo > c.Hi) || c.LongestAtLeast < 0 || c.LongestAtLeast > math.MaxInt32 || c.Distinct < 0 {
			return nil, qerr.Internalf("codec: malformed statistics for column %d", i)
		}
		out[i] = physical.ColumnStats{Bounded: c.Bounded, Lo: c.Lo, Hi: c.Hi, NoNulls: c.NoNulls,
			LongestAtLeast: int(c.LongestAtLeast), Distinct: c.Distinct}
	}
	return out, nil
}

// DecodeLocation converts and validates a wire location: the job id must
// match the agreed pattern and the ids and counts must not be negative.
// A missing executor gives a zero ExecutorMeta.
func DecodeLocation(m *rpc.PartitionLocation) (physical.PartitionLocation, error) {
	if m == nil {
		return physical.PartitionLocation{}, qerr.Internalf("codec: missing partition location")
	}
	if !physical.ValidJobID(m.JobId) {
		return physical.PartitionLocation{}, qerr.Internalf("codec: partition location has invalid job id %q", m.JobId)
	}
	if m.StageId < 0 || m.OutputPartition < 0 || m.MapPartition < 0 || m.Rows < 0 || m.Batches < 0 || m.Bytes < 0 {
		return physical.PartitionLocation{}, qerr.Internalf("codec: partition location %s/%d/%d/%d has a negative field", m.JobId, m.StageId, m.OutputPartition, m.MapPartition)
	}
	l := physical.PartitionLocation{
		JobID:           m.JobId,
		StageID:         int(m.StageId),
		OutputPartition: int(m.OutputPartition),
		MapPartition:    int(m.MapPartition),
		Rows:            m.Rows,
		Batches:         m.Batches,
		Bytes:           m.Bytes,
		Ticket:          string(m.Ticket),
	}
	st, err := DecodeColumnStats(m.ColStats)
	if err != nil {
		return physical.PartitionLocation{}, err
	}
	l.Stats = st
	if len(m.Inline) > physical.MaxInlineBytes {
		return physical.PartitionLocation{}, qerr.Internalf("codec: partition location %s/%d/%d/%d carries %d inline bytes, more than %d", m.JobId, m.StageId, m.OutputPartition, m.MapPartition, len(m.Inline), physical.MaxInlineBytes)
	}
	if len(m.Inline) > 0 {
		l.Inline = m.Inline
	}
	if e := m.Executor; e != nil {
		port := e.FlightPort
		if port == 0 {
			port = e.GrpcPort
		}
		if port < 0 || port > 65535 {
			return physical.PartitionLocation{}, qerr.Internalf("codec: partition location executor %q has invalid port %d", e.Id, port)
		}
		l.Executor = physical.ExecutorMeta{ID: e.Id, Host: e.Host, FlightPort: int(port)}
	}
	return l, nil
}

func encodeLocations(ls [][]physical.PartitionLocation) []*rpc.PartitionLocations {
	out := make([]*rpc.PartitionLocations, len(ls))
	for i, p := range ls {
		m := &rpc.PartitionLocations{Locations: make([]*rpc.PartitionLocation, len(p))}
		for j, l := range p {
			m.Locations[j] = EncodeLocation(l)
		}
		out[i] = m
	}
	return out
}

func decodeLocations(ms []*rpc.PartitionLocations) ([][]physical.PartitionLocation, error) {
	if ms == nil {
		return nil, nil
	}
	out := make([][]physical.PartitionLocation, len(ms))
	for i, m := range ms {
		if m == nil {
			continue
		}
		out[i] = make([]physical.PartitionLocation, len(m.Locations))
		for j, lm := range m.Locations {
			l, err := DecodeLocation(lm)
			if err != nil {
				return nil, err
			}
			out[i][j] = l
		}
	}
	return out, nil
}

func encodePlans(ps []physical.Plan) ([]*rpc.PhysicalPlan, error) {
	out := make([]*rpc.PhysicalPlan, len(ps))
	for i, p := range ps {
		m, err := encodePlan(p)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

func encodePlan(p physical.Plan) (*rpc.PhysicalPlan, error) {
	switch n := p.(type) {
	case nil:
		return nil, qerr.Internalf("codec: missing physical plan")
	case *physical.Scan:
		fs, err := arrowpb.EncodeSchema(n.FileSchema)
		if err != nil {
			return nil, err
		}
		pred, err := encodeOptExpr(n.Predicate)
		if err != nil {
			return nil, err
		}
		m := &rpc.PhysicalScan{Table: n.Table, Format: string(n.Format), FileSchema: fs,
			HasProjection: n.Projection != nil, Options: n.Options, Predicate: pred, Fetch: n.Fetch, RowGroups: encodeRowGroups(n)}
		for _, c := range n.Projection {
			m.Projection = append(m.Projection, int32(c))
		}
		for _, files := range n.Partitions {
			m.Partitions = append(m.Partitions, &rpc.FileList{Files: files})
		}
		m.Disjoint = int32s(n.Disjoint)
		m.Stats = encodeScanStats(n.Stats)
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Scan{Scan: m}}, nil
	case *physical.Filter:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		pred, err := encodeExpr(n.Predicate)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Filter{Filter: &rpc.PhysicalFilter{Input: in, Predicate: pred}}}, nil
	case *physical.Projection:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		es, err := encodeExprs(n.Exprs)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Projection{Projection: &rpc.PhysicalProjection{Input: in, Exprs: es, Names: n.Names}}}, nil
	case *physical.HashAggregate:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		gs, err := encodeExprs(n.GroupBy)
		if err != nil {
			return nil, err
		}
		m := &rpc.PhysicalHashAggregate{Input: in, Mode: int32(n.Mode), GroupBy: gs, GroupNames: n.GroupNames}
		for _, a := range n.Aggs {
			arg, err := encodeOptExpr(a.Arg)
			if err != nil {
				return nil, err
			}
			t, err := arrowpb.EncodeType(a.Type)
			if err != nil {
				return nil, err
			}
			am := &rpc.PhysicalAggregateExpr{Func: int32(a.Func), Arg: arg, Distinct: a.Distinct, Type: t, Name: a.Name, SetState: a.SetState, Filter: a.Filter}
			for _, o := range a.Order {
				am.OrderDesc = append(am.OrderDesc, o.Desc)
				am.OrderNullsFirst = append(am.OrderNullsFirst, o.NullsFirst)
			}
			m.Aggs = append(m.Aggs, am)
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_HashAggregate{HashAggregate: m}}, nil
	case *physical.HashJoin:
		l, err := encodePlan(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := encodePlan(n.Right)
		if err != nil {
			return nil, err
		}
		f, err := encodeOptExpr(n.Filter)
		if err != nil {
			return nil, err
		}
		m := &rpc.PhysicalHashJoin{Left: l, Right: r, Mode: int32(n.Mode), Type: int32(n.Type), Filter: f, NullAware: n.NullAware, MarkName: n.MarkName}
		for _, on := range n.On {
			le, err := encodeExpr(on.Left)
			if err != nil {
				return nil, err
			}
			re, err := encodeExpr(on.Right)
			if err != nil {
				return nil, err
			}
			m.On = append(m.On, &rpc.PhysicalJoinOn{Left: le, Right: re})
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_HashJoin{HashJoin: m}}, nil
	case *physical.NestedLoopJoin:
		l, err := encodePlan(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := encodePlan(n.Right)
		if err != nil {
			return nil, err
		}
		f, err := encodeOptExpr(n.Filter)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_NestedLoopJoin{NestedLoopJoin: &rpc.PhysicalNestedLoopJoin{
			Left: l, Right: r, Type: int32(n.Type), Filter: f, MarkName: n.MarkName}}}, nil
	case *physical.Sort:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := encodeSortKeys(n.Keys)
		if err != nil {
			return nil, err
		}
		m := &rpc.PhysicalSort{Input: in, Keys: keys, Fetch: n.Fetch, PreservePartitioning: n.PreservePartitioning}
		if l := n.PartitionLimit; l != nil {
			m.PartitionLimit = &rpc.PartitionLimit{Keys: int32(l.Keys), K: l.K, Mode: int32(l.Mode)}
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Sort{Sort: m}}, nil
	case *physical.SortPreservingMerge:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := encodeSortKeys(n.Keys)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_SortPreservingMerge{SortPreservingMerge: &rpc.PhysicalSortPreservingMerge{Input: in, Keys: keys, Fetch: n.Fetch}}}, nil
	case *physical.Limit:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Limit{Limit: &rpc.PhysicalLimit{Input: in, Skip: n.Skip, Fetch: n.Fetch}}}, nil
	case *physical.LocalLimit:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_LocalLimit{LocalLimit: &rpc.PhysicalLocalLimit{Input: in, Fetch: n.Fetch}}}, nil
	case *physical.Union:
		ins, err := encodePlans(n.Inputs)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Union{Union: &rpc.PhysicalUnion{Inputs: ins}}}, nil
	case *physical.Values:
		s, err := arrowpb.EncodeSchema(n.OutSchema)
		if err != nil {
			return nil, err
		}
		m := &rpc.PhysicalValues{Schema: s, Rows: make([]*rpc.LiteralRow, len(n.Rows))}
		for i, row := range n.Rows {
			r := &rpc.LiteralRow{Values: make([]*rpc.Literal, len(row))}
			for j, l := range row {
				if l == nil {
					return nil, qerr.Internalf("codec: Values row %d column %d is missing", i, j)
				}
				lm, err := arrowpb.EncodeLiteral(l.Type, l.Value)
				if err != nil {
					return nil, err
				}
				r.Values[j] = lm
			}
			m.Rows[i] = r
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Values{Values: m}}, nil
	case *physical.Empty:
		s, err := arrowpb.EncodeSchema(n.OutSchema)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Empty{Empty: &rpc.PhysicalEmpty{Schema: s, ProduceOneRow: n.ProduceOneRow}}}, nil
	case *physical.Repartition:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := encodeExprs(n.Keys)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Repartition{Repartition: &rpc.PhysicalRepartition{Input: in, Keys: keys, N: int32(n.N)}}}, nil
	case *physical.Coalesce:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Coalesce{Coalesce: &rpc.PhysicalCoalesce{Input: in}}}, nil
	case *physical.ShuffleWriter:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := encodeExprs(n.Keys)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_ShuffleWriter{ShuffleWriter: &rpc.PhysicalShuffleWriter{
			Input: in, JobId: n.JobID, StageId: int32(n.StageID), Keys: keys, N: int32(n.N),
			Compression: string(n.Compression), Pinned: n.Pinned, InlineLimit: n.InlineLimit}}}, nil
	case *physical.UnresolvedShuffle:
		s, err := arrowpb.EncodeSchema(n.OutSchema)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_UnresolvedShuffle{UnresolvedShuffle: &rpc.PhysicalUnresolvedShuffle{
			StageId: int32(n.StageID), Schema: s, Partitions: int32(n.Partitions)}}}, nil
	case *physical.ShuffleReader:
		s, err := arrowpb.EncodeSchema(n.OutSchema)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_ShuffleReader{ShuffleReader: &rpc.PhysicalShuffleReader{
			StageId: int32(n.StageID), Schema: s, Locations: encodeLocations(n.Locations)}}}, nil
	case *physical.CacheReader:
		s, err := arrowpb.EncodeSchema(n.OutSchema)
		if err != nil {
			return nil, err
		}
		pred, err := encodeOptExpr(n.Predicate)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_CacheReader{CacheReader: &rpc.PhysicalCacheReader{
			Key:  &rpc.CacheKey{SessionId: n.Key.SessionID, CacheId: n.Key.CacheID},
			Name: n.Name, Schema: s, Locations: encodeLocations(n.Locations), Disjoint: int32s(n.Disjoint), Predicate: pred}}}, nil
	case *physical.Window:
		return encodeWindow(n)
	case *physical.FileSink:
		return encodeFileSink(n)
	case *physical.FileCommit:
		return encodeFileCommit(n)
	case *physical.RecursiveQuery:
		return encodeRecursiveQuery(n)
	case *physical.WorkTable:
		return encodeWorkTable(n)
	case *physical.Expand:
		return encodeExpand(n)
	}
	return nil, qerr.Internalf("codec: unknown physical plan node %T", p)
}

// int32s converts column positions for the wire.
func int32s(cols []int) []int32 {
	var out []int32
	for _, c := range cols {
		out = append(out, int32(c))
	}
	return out
}

// width is the number of columns of p's output.
func width(p physical.Plan) int { return len(p.Schema().Fields()) }

func checkJoinType(t int32) (physical.JoinType, error) {
	if t < int32(physical.InnerJoin) || t > int32(physical.RightAntiJoin) {
		return 0, qerr.Internalf("codec: unknown join type %d", t)
	}
	return physical.JoinType(t), nil
}

func checkFetch(what string, fetch int64) error {
	if fetch < -1 {
		return qerr.Internalf("codec: %s fetch %d is invalid (want ≥ 0, or -1 for none)", what, fetch)
	}
	return nil
}

func decodePlan(m *rpc.PhysicalPlan) (physical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing physical plan")
	}
	switch k := m.Node.(type) {
	case *rpc.PhysicalPlan_Scan:
		return decodeScan(k.Scan)
	case *rpc.PhysicalPlan_Filter:
		n := k.Filter
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		pred, err := decodeExpr(n.Predicate, width(in))
		if err != nil {
			return nil, err
		}
		return &physical.Filter{Input: in, Predicate: pred}, nil
	case *rpc.PhysicalPlan_Projection:
		n := k.Projection
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		if len(n.Names) != len(n.Exprs) {
			return nil, qerr.Internalf("codec: projection has %d expressions and %d names", len(n.Exprs), len(n.Names))
		}
		es, err := decodeExprs(n.Exprs, width(in))
		if err != nil {
			return nil, err
		}
		return &physical.Projection{Input: in, Exprs: es, Names: n.Names}, nil
	case *rpc.PhysicalPlan_HashAggregate:
		return decodeAggregate(k.HashAggregate)
	case *rpc.PhysicalPlan_HashJoin:
		n := k.HashJoin
		if n == nil {
			break
		}
		l, err := decodePlan(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := decodePlan(n.Right)
		if err != nil {
			return nil, err
		}
		if n.Mode < int32(physical.CollectLeft) || n.Mode > int32(physical.Partitioned) {
			return nil, qerr.Internalf("codec: unknown join mode %d", n.Mode)
		}
		jt, err := checkJoinType(n.Type)
		if err != nil {
			return nil, err
		}
		j := &physical.HashJoin{Left: l, Right: r, Mode: physical.JoinMode(n.Mode), Type: jt, NullAware: n.NullAware, MarkName: n.MarkName}
		lw, rw := width(l), width(r)
		for _, on := range n.On {
			if on == nil {
				return nil, qerr.Internalf("codec: missing join key")
			}
			le, err := decodeExpr(on.Left, lw)
			if err != nil {
				return nil, err
			}
			re, err := decodeExpr(on.Right, rw)
			if err != nil {
				return nil, err
			}
			j.On = append(j.On, physical.JoinOn{Left: le, Right: re})
		}
		if j.Filter, err = decodeOptExpr(n.Filter, lw+rw); err != nil {
			return nil, err
		}
		return j, nil
	case *rpc.PhysicalPlan_NestedLoopJoin:
		n := k.NestedLoopJoin
		if n == nil {
			break
		}
		l, err := decodePlan(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := decodePlan(n.Right)
		if err != nil {
			return nil, err
		}
		jt, err := checkJoinType(n.Type)
		if err != nil {
			return nil, err
		}
		f, err := decodeOptExpr(n.Filter, width(l)+width(r))
		if err != nil {
			return nil, err
		}
		return &physical.NestedLoopJoin{Left: l, Right: r, Type: jt, Filter: f, MarkName: n.MarkName}, nil
	case *rpc.PhysicalPlan_Sort:
		n := k.Sort
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := decodeSortKeys(n.Keys, width(in))
		if err != nil {
			return nil, err
		}
		if err := checkFetch("sort", n.Fetch); err != nil {
			return nil, err
		}
		lim, err := decodePartitionLimit(n.PartitionLimit, len(keys), n.Fetch)
		if err != nil {
			return nil, err
		}
		return &physical.Sort{Input: in, Keys: keys, Fetch: n.Fetch, PreservePartitioning: n.PreservePartitioning, PartitionLimit: lim}, nil
	case *rpc.PhysicalPlan_SortPreservingMerge:
		n := k.SortPreservingMerge
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := decodeSortKeys(n.Keys, width(in))
		if err != nil {
			return nil, err
		}
		if err := checkFetch("sort-preserving merge", n.Fetch); err != nil {
			return nil, err
		}
		return &physical.SortPreservingMerge{Input: in, Keys: keys, Fetch: n.Fetch}, nil
	case *rpc.PhysicalPlan_Limit:
		n := k.Limit
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		if n.Skip < 0 {
			return nil, qerr.Internalf("codec: limit skip %d is negative", n.Skip)
		}
		return &physical.Limit{Input: in, Skip: n.Skip, Fetch: n.Fetch}, nil
	case *rpc.PhysicalPlan_LocalLimit:
		n := k.LocalLimit
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &physical.LocalLimit{Input: in, Fetch: n.Fetch}, nil
	case *rpc.PhysicalPlan_Union:
		n := k.Union
		if n == nil {
			break
		}
		if len(n.Inputs) == 0 {
			return nil, qerr.Internalf("codec: union without inputs")
		}
		ins := make([]physical.Plan, len(n.Inputs))
		for i, im := range n.Inputs {
			in, err := decodePlan(im)
			if err != nil {
				return nil, err
			}
			if i > 0 && width(in) != width(ins[0]) {
				return nil, qerr.Internalf("codec: union input %d has %d columns, want %d", i, width(in), width(ins[0]))
			}
			ins[i] = in
		}
		return &physical.Union{Inputs: ins}, nil
	case *rpc.PhysicalPlan_Values:
		n := k.Values
		if n == nil {
			break
		}
		s, err := arrowpb.DecodeSchema(n.Schema)
		if err != nil {
			return nil, err
		}
		v := &physical.Values{OutSchema: s, Rows: make([][]*physical.Literal, len(n.Rows))}
		for i, rm := range n.Rows {
			if rm == nil || len(rm.Values) != s.NumFields() {
				return nil, qerr.Internalf("codec: Values row %d does not have %d columns", i, s.NumFields())
			}
			row := make([]*physical.Literal, len(rm.Values))
			for j, lm := range rm.Values {
				t, val, err := arrowpb.DecodeLiteral(lm)
				if err != nil {
					return nil, err
				}
				row[j] = &physical.Literal{Type: t, Value: val}
			}
			v.Rows[i] = row
		}
		return v, nil
	case *rpc.PhysicalPlan_Empty:
		n := k.Empty
		if n == nil {
			break
		}
		s, err := arrowpb.DecodeSchema(n.Schema)
		if err != nil {
			return nil, err
		}
		return &physical.Empty{OutSchema: s, ProduceOneRow: n.ProduceOneRow}, nil
	case *rpc.PhysicalPlan_Repartition:
		n := k.Repartition
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		if n.N < 1 || n.N > wire.MaxPartitions {
			return nil, qerr.Internalf("codec: repartition into %d partitions", n.N)
		}
		keys, err := decodeExprs(n.Keys, width(in))
		if err != nil {
			return nil, err
		}
		return &physical.Repartition{Input: in, Keys: keys, N: int(n.N)}, nil
	case *rpc.PhysicalPlan_Coalesce:
		n := k.Coalesce
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &physical.Coalesce{Input: in}, nil
	case *rpc.PhysicalPlan_ShuffleWriter:
		return decodeShuffleWriter(k.ShuffleWriter)
	case *rpc.PhysicalPlan_UnresolvedShuffle:
		n := k.UnresolvedShuffle
		if n == nil {
			break
		}
		s, err := arrowpb.DecodeSchema(n.Schema)
		if err != nil {
			return nil, err
		}
		if n.StageId < 0 || n.Partitions < 0 || n.Partitions > wire.MaxPartitions {
			return nil, qerr.Internalf("codec: unresolved shuffle stage=%d partitions=%d is invalid", n.StageId, n.Partitions)
		}
		return &physical.UnresolvedShuffle{StageID: int(n.StageId), OutSchema: s, Partitions: int(n.Partitions)}, nil
	case *rpc.PhysicalPlan_ShuffleReader:
		n := k.ShuffleReader
		if n == nil {
			break
		}
		s, err := arrowpb.DecodeSchema(n.Schema)
		if err != nil {
			return nil, err
		}
		if n.StageId < 0 {
			return nil, qerr.Internalf("codec: shuffle reader stage %d is negative", n.StageId)
		}
		locs, err := decodeLocations(n.Locations)
		if err != nil {
			return nil, err
		}
		return &physical.ShuffleReader{StageID: int(n.StageId), OutSchema: s, Locations: locs}, nil
	case *rpc.PhysicalPlan_CacheReader:
		n := k.CacheReader
		if n == nil {
			break
		}
		s, err := arrowpb.DecodeSchema(n.Schema)
		if err != nil {
			return nil, err
		}
		locs, err := decodeLocations(n.Locations)
		if err != nil {
			return nil, err
		}
		var key physical.CacheKey
		if n.Key != nil {
			key = physical.CacheKey{SessionID: n.Key.SessionId, CacheID: n.Key.CacheId}
		}
		cr := &physical.CacheReader{Key: key, Name: n.Name, OutSchema: s, Locations: locs}
		for _, c := range n.Disjoint {
			if c < 0 || int(c) >= s.NumFields() {
				return nil, qerr.Internalf("codec: cache reader of %q lists disjoint column %d of %d", n.Name, c, s.NumFields())
			}
			cr.Disjoint = append(cr.Disjoint, int(c))
		}
		if cr.Predicate, err = decodeOptExpr(n.Predicate, s.NumFields()); err != nil {
			return nil, err
		}
		return cr, nil
	case *rpc.PhysicalPlan_Window:
		return decodeWindow(k.Window)
	case *rpc.PhysicalPlan_FileSink:
		return decodeFileSink(k.FileSink)
	case *rpc.PhysicalPlan_FileCommit:
		return decodeFileCommit(k.FileCommit)
	case *rpc.PhysicalPlan_RecursiveQuery:
		return decodeRecursiveQuery(k.RecursiveQuery)
	case *rpc.PhysicalPlan_WorkTable:
		return decodeWorkTable(k.WorkTable)
	case *rpc.PhysicalPlan_Expand:
		return decodeExpand(k.Expand)
	}
	return nil, qerr.Internalf("codec: empty or unknown physical plan node %T", m.Node)
}

func decodeScan(n *rpc.PhysicalScan) (physical.Plan, error) {
	if n == nil {
		return nil, qerr.Internalf("codec: empty scan")
	}
	switch f := physical.Format(n.Format); f {
	case physical.FormatParquet, physical.FormatCSV, physical.FormatArrow, physical.FormatJSON, physical.FormatMemory:
	default:
		return nil, qerr.Internalf("codec: scan of %q has unknown format %q", n.Table, n.Format)
	}
	fs, err := arrowpb.DecodeSchema(n.FileSchema)
	if err != nil {
		return nil, err
	}
	s := &physical.Scan{Table: n.Table, Format: physical.Format(n.Format), FileSchema: fs, Options: n.Options, Fetch: n.Fetch}
	if n.HasProjection {
		s.Projection = make([]int, len(n.Projection))
		for i, c := range n.Projection {
			if c < 0 || int(c) >= fs.NumFields() {
				return nil, qerr.Internalf("codec: scan of %q projects column %d of %d", n.Table, c, fs.NumFields())
			}
			s.Projection[i] = int(c)
		}
	} else if len(n.Projection) > 0 {
		return nil, qerr.Internalf("codec: scan of %q has a projection without has_projection", n.Table)
	}
	if n.Partitions != nil {
		s.Partitions = make([][]string, len(n.Partitions))
		for i, p := range n.Partitions {
			if p != nil {
				s.Partitions[i] = p.Files
			}
		}
	}
	if err := decodeRowGroups(s, n.RowGroups); err != nil {
		return nil, err
	}
	if err := checkFetch("scan", n.Fetch); err != nil {
		return nil, err
	}
	for _, c := range n.Disjoint {
		if c < 0 || int(c) >= s.Schema().NumFields() {
			return nil, qerr.Internalf("codec: scan of %q lists disjoint column %d of %d", n.Table, c, s.Schema().NumFields())
		}
		s.Disjoint = append(s.Disjoint, int(c))
	}
	if s.Predicate, err = decodeOptExpr(n.Predicate, width(s)); err != nil {
		return nil, err
	}
	if s.Stats, err = decodeScanStats(n.Stats, s); err != nil {
		return nil, err
	}
	return s, nil
}

func encodeScanStats(st *physical.PlanStats) *rpc.ScanStats {
	if st == nil {
		return nil
	}
	m := &rpc.ScanStats{Rows: st.Rows}
	for _, c := range st.Cols {
		m.Cols = append(m.Cols, &rpc.ColumnStats{Bounded: c.Bounded, Lo: c.Lo, Hi: c.Hi, NoNulls: c.NoNulls,
			LongestAtLeast: int64(c.LongestAtLeast), Distinct: c.Distinct})
	}
	return m
}

// decodeScanStats checks the statistics fit the scan: one per output
// column, bounds in order, nothing negative.
func decodeScanStats(m *rpc.ScanStats, s *physical.Scan) (*physical.PlanStats, error) {
	if m == nil {
		return nil, nil
	}
	if len(m.Cols) != s.Schema().NumFields() || m.Rows < -1 {
		return nil, qerr.Internalf("codec: scan of %q has statistics of %d columns and %d rows for %d columns", s.Table, len(m.Cols), m.Rows, s.Schema().NumFields())
	}
	st := &physical.PlanStats{Rows: m.Rows, Cols: make([]physical.ColumnStats, len(m.Cols))}
	for i, c := range m.Cols {
		if c == nil || (c.Bounded && c.Lo > c.Hi) || c.LongestAtLeast < 0 || c.LongestAtLeast > math.MaxInt32 || c.Distinct < 0 {
			return nil, qerr.Internalf("codec: scan of %q has malformed statistics for column %d", s.Table, i)
		}
		st.Cols[i] = physical.ColumnStats{Bounded: c.Bounded, Lo: c.Lo, Hi: c.Hi, NoNulls: c.NoNulls,
			LongestAtLeast: int(c.LongestAtLeast), Distinct: c.Distinct}
	}
	return st, nil
}

func decodeAggregate(n *rpc.PhysicalHashAggregate) (physical.Plan, error) {
	if n == nil {
		return nil, qerr.Internalf("codec: empty hash aggregate")
	}
	in, err := decodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	if n.Mode < int32(physical.AggPartial) || n.Mode > int32(physical.AggSingle) {
		return nil, qerr.Internalf("codec: unknown aggregate mode %d", n.Mode)
	}
	mode := physical.AggMode(n.Mode)
	if len(n.GroupNames) != len(n.GroupBy) {
		return nil, qerr.Internalf("codec: aggregate has %d group expressions and %d names", len(n.GroupBy), len(n.GroupNames))
	}
	w := width(in)
	gs, err := decodeExprs(n.GroupBy, w)
	if err != nil {
		return nil, err
	}
	a := &physical.HashAggregate{Input: in, Mode: mode, GroupBy: gs, GroupNames: n.GroupNames}
	// In Final mode each Arg is ignored (state is read from the input after
	// the group columns) and may refer to the Partial's input, so its
	// columns are not checked against this input.
	argWidth := w
	if mode == physical.AggFinal {
		argWidth = unchecked
	}
	for _, am := range n.Aggs {
		if am == nil {
			return nil, qerr.Internalf("codec: missing aggregate expression")
		}
		if am.Func < int32(physical.AggCount) || am.Func > int32(physical.AggLast) {
			return nil, qerr.Internalf("codec: unknown aggregate function %d", am.Func)
		}
		fn := physical.AggFunc(am.Func)
		arg, err := decodeOptExpr(am.Arg, argWidth)
		if err != nil {
			return nil, err
		}
		if arg == nil && fn != physical.AggCount {
			return nil, qerr.Internalf("codec: aggregate %s(%s) has no argument", fn, am.Name)
		}
		t, err := arrowpb.DecodeType(am.Type)
		if err != nil {
			return nil, err
		}
		ae := physical.AggregateExpr{Func: fn, Arg: arg, Distinct: am.Distinct, Type: t, Name: am.Name, SetState: am.SetState, Filter: am.Filter}
		if len(am.OrderDesc) != len(am.OrderNullsFirst) {
			return nil, qerr.Internalf("codec: aggregate %s with %d sort directions and %d NULL orders", am.Name, len(am.OrderDesc), len(am.OrderNullsFirst))
		}
		for i, d := range am.OrderDesc {
			ae.Order = append(ae.Order, physical.AggOrder{Desc: d, NullsFirst: am.OrderNullsFirst[i]})
		}
		if ae.Collects() {
			// The row layout the operator relies on: own arguments, keys, filter.
			st, ok := arg.DataType().(*arrow.StructType)
			own := 1
			if fn == physical.AggStringAgg {
				own = 2
			}
			if ae.Filter {
				own++
			}
			if !ok || st.NumFields() != own+len(ae.Order) || ae.SetState || (ae.Filter && st.Field(st.NumFields()-1).Type.ID() != arrow.BOOL) {
				return nil, qerr.Internalf("codec: collecting aggregate %s over %s with %d sort keys", am.Name, arg.DataType(), len(ae.Order))
			}
		} else if len(ae.Order) > 0 || ae.Filter {
			return nil, qerr.Internalf("codec: aggregate %s(%s) cannot have ORDER BY or FILTER", fn, am.Name)
		}
		a.Aggs = append(a.Aggs, ae)
	}
	return a, nil
}

func decodeShuffleWriter(n *rpc.PhysicalShuffleWriter) (physical.Plan, error) {
	if n == nil {
		return nil, qerr.Internalf("codec: empty shuffle writer")
	}
	in, err := decodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	// An empty job id is allowed (plans built before a job exists); any
	// other must match the agreed pattern, since paths are built from it.
	if n.JobId != "" && !physical.ValidJobID(n.JobId) {
		return nil, qerr.Internalf("codec: shuffle writer has invalid job id %q", n.JobId)
	}
	if n.StageId < 0 || n.N < 0 || n.N > wire.MaxPartitions {
		return nil, qerr.Internalf("codec: shuffle writer stage=%d n=%d is invalid", n.StageId, n.N)
	}
	if len(n.Keys) > 0 && n.N < 1 {
		return nil, qerr.Internalf("codec: hash shuffle writer into %d partitions", n.N)
	}
	if _, err := physical.ParseCompression(n.Compression); err != nil {
		return nil, qerr.Internalf("codec: shuffle writer has unknown compression %q", n.Compression)
	}
	if n.InlineLimit < 0 || n.InlineLimit > physical.MaxInlineBytes || (n.InlineLimit > 0 && n.Pinned) {
		return nil, qerr.Internalf("codec: shuffle writer inline limit %d is invalid (pinned %t)", n.InlineLimit, n.Pinned)
	}
	keys, err := decodeExprs(n.Keys, width(in))
	if err != nil {
		return nil, err
	}
	return &physical.ShuffleWriter{Input: in, JobID: n.JobId, StageID: int(n.StageId), Keys: keys, N: int(n.N),
		Compression: physical.Compression(n.Compression), Pinned: n.Pinned, InlineLimit: n.InlineLimit}, nil
}
