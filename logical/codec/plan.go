package codec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/wire"
)

// Encode serialises a logical plan (rpc.LogicalPlan).
func Encode(p logical.Plan) ([]byte, error) {
	m, err := EncodePlan(p)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(m, "logical plan")
}

// Decode parses a plan made by Encode and rebuilds it through logical's
// constructors. Malformed input is a qerr Internal error, never a panic; a
// plan that decodes but does not type-check keeps the constructor's error.
func Decode(b []byte) (p logical.Plan, err error) {
	defer wire.Recover(&err)
	var m rpc.LogicalPlan
	if err := wire.Unmarshal(b, &m, "logical plan"); err != nil {
		return nil, err
	}
	return DecodePlan(&m)
}

// EncodePlan converts a plan to its protobuf message.
func EncodePlan(p logical.Plan) (*rpc.LogicalPlan, error) { return encodePlan(p) }

// DecodePlan converts a protobuf plan message back to a plan; it never panics.
func DecodePlan(m *rpc.LogicalPlan) (p logical.Plan, err error) {
	defer wire.Recover(&err)
	p, err = decodePlan(m)
	if err != nil {
		if qerr.KindOf(err) != qerr.Internal {
			// A constructor refused the decoded parts: the bytes do not
			// describe a valid plan.
			return nil, qerr.Internalf("codec: decoded plan does not type-check: %w", err)
		}
		return nil, err
	}
	// The scheduler optimizes and plans what it decodes: a plan larger
	// than SQL planning allows is refused here as it would be there.
	if err := logical.CheckSize(p); err != nil {
		return nil, qerr.Internalf("codec: decoded plan is too large: %w", err)
	}
	probe(p)
	return p, nil
}

// probe calls every node's and expression's display and schema methods so
// that a plan that would panic later panics here, inside Decode's recover.
func probe(p logical.Plan) {
	_ = p.Schema()
	_ = p.String()
	for _, e := range p.Exprs() {
		probeExpr(e)
	}
	for _, c := range p.Children() {
		probe(c)
	}
}

// probeExpr renders e once (one pass over the whole tree: rendering each
// node separately is quadratic in a deep expression) and probes the plans
// of its subqueries.
func probeExpr(e logical.Expr) {
	_ = e.String()
	probeSubqueries(e)
}

func probeSubqueries(e logical.Expr) {
	switch q := e.(type) {
	case *logical.ScalarSubquery:
		probe(q.Plan)
	case *logical.Exists:
		probe(q.Plan)
	case *logical.InSubquery:
		probe(q.Plan)
	}
	for _, c := range e.Children() {
		probeSubqueries(c)
	}
}

func encodeFields(s *logical.Schema) ([]*rpc.LogicalField, error) {
	if s == nil {
		return nil, qerr.Internalf("codec: missing schema")
	}
	out := make([]*rpc.LogicalField, len(s.Fields))
	for i, f := range s.Fields {
		t, err := arrowpb.EncodeType(f.Type)
		if err != nil {
			return nil, err
		}
		out[i] = &rpc.LogicalField{Qualifier: f.Qualifier, Name: f.Name, Type: t, Nullable: f.Nullable}
	}
	return out, nil
}

func decodeFields(ms []*rpc.LogicalField) (*logical.Schema, error) {
	fs := make([]logical.Field, len(ms))
	for i, m := range ms {
		if m == nil {
			return nil, qerr.Internalf("codec: missing schema field")
		}
		t, err := arrowpb.DecodeType(m.Type)
		if err != nil {
			return nil, err
		}
		fs[i] = logical.Field{Qualifier: m.Qualifier, Name: m.Name, Type: t, Nullable: m.Nullable}
	}
	return logical.NewSchema(fs...), nil
}

// encodeTable describes t without its data (see the package comment).
func encodeTable(t *catalog.Table) (*rpc.TableDef, error) {
	if t == nil {
		return nil, qerr.Internalf("codec: scan without a table")
	}
	s, err := arrowpb.EncodeSchema(t.Schema)
	if err != nil {
		return nil, err
	}
	m := &rpc.TableDef{Name: t.Name, Schema: s, Format: string(t.Format), Rows: t.Rows, Distinct: t.Distinct, Version: t.Version}
	if t.Bounds != nil {
		m.BoundLo, m.BoundHi = make([]int64, len(t.Bounds)), make([]int64, len(t.Bounds))
		for i, b := range t.Bounds {
			if b.Known && b.Lo <= b.Hi {
				m.BoundLo[i], m.BoundHi[i] = b.Lo, b.Hi
			} else {
				m.BoundLo[i], m.BoundHi[i] = 1, 0
			}
		}
	}
	if t.Format == catalog.Memory {
		m.MemoryPartitions = int32(len(t.Partitions))
		return m, nil
	}
	m.Location, m.Files, m.Options = t.Location, t.Files, t.Options
	return m, nil
}

func decodeTable(m *rpc.TableDef) (*catalog.Table, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: scan without a table")
	}
	if m.Name == "" {
		return nil, qerr.Internalf("codec: table without a name")
	}
	s, err := arrowpb.DecodeSchema(m.Schema)
	if err != nil {
		return nil, err
	}
	t := &catalog.Table{Name: m.Name, Schema: s, Format: catalog.Format(m.Format), Rows: m.Rows, Version: m.Version}
	if len(m.Distinct) == s.NumFields() {
		t.Distinct = m.Distinct
	}
	if len(m.BoundLo) == s.NumFields() && len(m.BoundHi) == s.NumFields() {
		t.Bounds = make([]catalog.KeyRange, s.NumFields())
		for i := range t.Bounds {
			if m.BoundLo[i] <= m.BoundHi[i] {
				t.Bounds[i] = catalog.KeyRange{Lo: m.BoundLo[i], Hi: m.BoundHi[i], Known: true}
			}
		}
	}
	switch t.Format {
	case catalog.Memory:
		if m.MemoryPartitions < 0 || m.MemoryPartitions > wire.MaxPartitions {
			return nil, qerr.Internalf("codec: memory table %q has %d partitions", m.Name, m.MemoryPartitions)
		}
		// The batches stay where the table was registered: one nil slice per partition.
		t.Partitions = make([][]arrow.RecordBatch, m.MemoryPartitions)
	case catalog.Parquet, catalog.CSV, catalog.Arrow, catalog.JSON:
		t.Location, t.Files, t.Options = m.Location, m.Files, m.Options
	default:
		return nil, qerr.Internalf("codec: table %q has unknown format %q", m.Name, m.Format)
	}
	return t, nil
}

func encodePlan(p logical.Plan) (*rpc.LogicalPlan, error) {
	switch n := p.(type) {
	case nil:
		return nil, qerr.Internalf("codec: missing logical plan")
	case *logical.Scan:
		t, err := encodeTable(n.Table)
		if err != nil {
			return nil, err
		}
		fs, err := encodeExprs(n.Filters)
		if err != nil {
			return nil, err
		}
		m := &rpc.LogicalScan{Table: t, Qualifier: n.Qualifier, HasProjection: n.Projection != nil, Filters: fs, Fetch: n.Fetch}
		for _, c := range n.Projection {
			m.Projection = append(m.Projection, int32(c))
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Scan{Scan: m}}, nil
	case *logical.Filter:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		pred, err := encodeExpr(n.Predicate)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Filter{Filter: &rpc.LogicalFilter{Input: in, Predicate: pred}}}, nil
	case *logical.Projection:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		es, err := encodeExprs(n.List)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Projection{Projection: &rpc.LogicalProjection{Input: in, Exprs: es}}}, nil
	case *logical.Aggregate:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		gs, err := encodeExprs(n.GroupBy)
		if err != nil {
			return nil, err
		}
		as, err := encodeExprs(n.Aggs)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Aggregate{Aggregate: &rpc.LogicalAggregate{Input: in, GroupBy: gs, Aggs: as}}}, nil
	case *logical.Join:
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
		m := &rpc.LogicalJoin{Left: l, Right: r, Type: int32(n.Type), Filter: f, NullAware: n.NullAware, MarkName: n.MarkName}
		for _, on := range n.On {
			le, err := encodeExpr(on.Left)
			if err != nil {
				return nil, err
			}
			re, err := encodeExpr(on.Right)
			if err != nil {
				return nil, err
			}
			m.On = append(m.On, &rpc.LogicalEquiPair{Left: le, Right: re})
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Join{Join: m}}, nil
	case *logical.Sort:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := encodeSortKeys(n.Keys)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Sort{Sort: &rpc.LogicalSort{Input: in, Keys: keys, Fetch: n.Fetch}}}, nil
	case *logical.Limit:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Limit{Limit: &rpc.LogicalLimit{Input: in, Skip: n.Skip, Fetch: n.Fetch}}}, nil
	case *logical.Union:
		m := &rpc.LogicalUnion{Inputs: make([]*rpc.LogicalPlan, len(n.Inputs))}
		for i, in := range n.Inputs {
			im, err := encodePlan(in)
			if err != nil {
				return nil, err
			}
			m.Inputs[i] = im
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Union{Union: m}}, nil
	case *logical.Values:
		fs, err := encodeFields(n.Schema())
		if err != nil {
			return nil, err
		}
		m := &rpc.LogicalValues{Schema: fs, Rows: make([]*rpc.LogicalExprRow, len(n.Rows))}
		for i, row := range n.Rows {
			es, err := encodeExprs(row)
			if err != nil {
				return nil, err
			}
			m.Rows[i] = &rpc.LogicalExprRow{Values: es}
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Values{Values: m}}, nil
	case *logical.EmptyRelation:
		fs, err := encodeFields(n.Schema())
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_EmptyRelation{EmptyRelation: &rpc.LogicalEmptyRelation{ProduceOneRow: n.ProduceOneRow, Schema: fs}}}, nil
	case *logical.SubqueryAlias:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_SubqueryAlias{SubqueryAlias: &rpc.LogicalSubqueryAlias{Input: in, Alias: n.Alias}}}, nil
	case *logical.Cache:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Cache{Cache: &rpc.LogicalCache{
			CacheId: n.CacheID, SessionId: n.SessionID, Input: in, Options: n.Options, Name: n.Name}}}, nil
	case *logical.CTERef:
		in, err := encodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_CteRef{CteRef: &rpc.LogicalCTERef{Id: int64(n.ID), Name: n.Name, Input: in, Filtered: n.Filtered}}}, nil
	case *logical.Window:
		return encodeWindow(n)
	case *logical.Write:
		return encodeWrite(n)
	case *logical.RecursiveQuery:
		return encodeRecursiveQuery(n)
	case *logical.WorkTable:
		return encodeWorkTable(n)
	case *logical.Expand:
		return encodeExpand(n)
	}
	return nil, qerr.Internalf("codec: unknown logical plan node %T", p)
}

func decodePlan(m *rpc.LogicalPlan) (logical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing logical plan")
	}
	switch k := m.Node.(type) {
	case *rpc.LogicalPlan_Scan:
		return decodeScan(k.Scan)
	case *rpc.LogicalPlan_Filter:
		n := k.Filter
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		pred, err := decodeExpr(n.Predicate)
		if err != nil {
			return nil, err
		}
		return logical.NewFilter(in, pred)
	case *rpc.LogicalPlan_Projection:
		n := k.Projection
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		es, err := decodeExprs(n.Exprs)
		if err != nil {
			return nil, err
		}
		return logical.NewProjection(in, es)
	case *rpc.LogicalPlan_Aggregate:
		n := k.Aggregate
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		gs, err := decodeExprs(n.GroupBy)
		if err != nil {
			return nil, err
		}
		as, err := decodeExprs(n.Aggs)
		if err != nil {
			return nil, err
		}
		return logical.NewAggregate(in, gs, as)
	case *rpc.LogicalPlan_Join:
		n := k.Join
		if n == nil {
			break
		}
		if n.Type < int32(logical.InnerJoin) || n.Type > int32(logical.MarkJoin) {
			return nil, qerr.Internalf("codec: unknown join type %d", n.Type)
		}
		l, err := decodePlan(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := decodePlan(n.Right)
		if err != nil {
			return nil, err
		}
		var on []logical.EquiPair
		for _, pm := range n.On {
			if pm == nil {
				return nil, qerr.Internalf("codec: missing join key")
			}
			le, err := decodeExpr(pm.Left)
			if err != nil {
				return nil, err
			}
			re, err := decodeExpr(pm.Right)
			if err != nil {
				return nil, err
			}
			on = append(on, logical.EquiPair{Left: le, Right: re})
		}
		f, err := decodeOptExpr(n.Filter)
		if err != nil {
			return nil, err
		}
		return logical.NewJoin(l, r, logical.JoinType(n.Type), on, f, n.NullAware, n.MarkName)
	case *rpc.LogicalPlan_Sort:
		n := k.Sort
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		keys, err := decodeSortKeys(n.Keys)
		if err != nil {
			return nil, err
		}
		return logical.NewSort(in, keys, n.Fetch)
	case *rpc.LogicalPlan_Limit:
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
		return &logical.Limit{Input: in, Skip: n.Skip, Fetch: n.Fetch}, nil
	case *rpc.LogicalPlan_Union:
		n := k.Union
		if n == nil {
			break
		}
		if len(n.Inputs) < 2 {
			return nil, qerr.Internalf("codec: union has %d inputs, want at least two", len(n.Inputs))
		}
		ins := make([]logical.Plan, len(n.Inputs))
		for i, im := range n.Inputs {
			in, err := decodePlan(im)
			if err != nil {
				return nil, err
			}
			ins[i] = in
		}
		return logical.NewUnion(ins)
	case *rpc.LogicalPlan_Values:
		n := k.Values
		if n == nil {
			break
		}
		s, err := decodeFields(n.Schema)
		if err != nil {
			return nil, err
		}
		rows := make([][]logical.Expr, len(n.Rows))
		for i, rm := range n.Rows {
			if rm == nil {
				return nil, qerr.Internalf("codec: missing VALUES row")
			}
			if rows[i], err = decodeExprs(rm.Values); err != nil {
				return nil, err
			}
		}
		return logical.NewValues(s, rows)
	case *rpc.LogicalPlan_EmptyRelation:
		n := k.EmptyRelation
		if n == nil {
			break
		}
		s, err := decodeFields(n.Schema)
		if err != nil {
			return nil, err
		}
		return logical.NewEmptyRelation(n.ProduceOneRow, s), nil
	case *rpc.LogicalPlan_SubqueryAlias:
		n := k.SubqueryAlias
		if n == nil {
			break
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return logical.NewSubqueryAlias(in, n.Alias), nil
	case *rpc.LogicalPlan_Cache:
		n := k.Cache
		if n == nil {
			break
		}
		if n.CacheId == "" {
			return nil, qerr.Internalf("codec: cache node without an id")
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		return &logical.Cache{CacheID: n.CacheId, SessionID: n.SessionId, Input: in, Options: n.Options, Name: n.Name}, nil
	case *rpc.LogicalPlan_CteRef:
		n := k.CteRef
		if n == nil {
			break
		}
		if n.Id < 1 || n.Id > math.MaxInt32 {
			return nil, qerr.Internalf("codec: CTE %q: id %d out of range", n.Name, n.Id)
		}
		in, err := decodePlan(n.Input)
		if err != nil {
			return nil, err
		}
		r, err := logical.NewCTERef(int(n.Id), n.Name, in)
		if err != nil {
			return nil, err
		}
		r.Filtered = n.Filtered
		return r, nil
	case *rpc.LogicalPlan_Window:
		return decodeWindow(k.Window)
	case *rpc.LogicalPlan_Write:
		return decodeWrite(k.Write)
	case *rpc.LogicalPlan_RecursiveQuery:
		return decodeRecursiveQuery(k.RecursiveQuery)
	case *rpc.LogicalPlan_WorkTable:
		return decodeWorkTable(k.WorkTable)
	case *rpc.LogicalPlan_Expand:
		return decodeExpand(k.Expand)
	}
	return nil, qerr.Internalf("codec: empty or unknown logical plan node %T", m.Node)
}

func decodeScan(n *rpc.LogicalScan) (logical.Plan, error) {
	if n == nil {
		return nil, qerr.Internalf("codec: empty scan")
	}
	t, err := decodeTable(n.Table)
	if err != nil {
		return nil, err
	}
	s := logical.NewScan(t, n.Qualifier)
	if n.HasProjection {
		cols := make([]int, len(n.Projection))
		for i, c := range n.Projection {
			if c < 0 || int(c) >= t.Schema.NumFields() {
				return nil, qerr.Internalf("codec: scan of %q projects column %d of %d", t.Name, c, t.Schema.NumFields())
			}
			cols[i] = int(c)
		}
		s = s.WithProjection(cols)
	} else if len(n.Projection) > 0 {
		return nil, qerr.Internalf("codec: scan of %q has a projection without has_projection", t.Name)
	}
	fs, err := decodeExprs(n.Filters)
	if err != nil {
		return nil, err
	}
	if fs != nil {
		s = s.WithFilters(fs)
	}
	// Scan has no setter for Fetch; s is this function's own copy.
	s.Fetch = n.Fetch
	return s, nil
}
