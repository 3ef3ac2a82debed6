package tpch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/pingcap/go-tpc/tpch/dbgen"
	"github.com/quiverdb/quiver/qerr"
)

// genMu serialises Generate: dbgen keeps all its state in package globals
// and is single-threaded.
var genMu sync.Mutex

// DefaultRowGroupRows is the Parquet row group size gen writes.
const DefaultRowGroupRows = 1 << 20

// GenOptions configure Generate.
type GenOptions struct {
	// SF is the scale factor: an integer of at least 1, or a multiple of
	// 0.001 below 1 (as the reference dbgen makes them).
	SF float64
	// Dir is the output folder; it must be empty or absent unless Force.
	Dir string
	// Format is "parquet" (the default) or "csv" ('|'-delimited, a header line).
	Format string
	// FilesPerTable 0 or 1 writes DIR/NAME.parquet; K > 1 writes K files
	// DIR/NAME/part-NNNNN.parquet per table (nation and region: one).
	FilesPerTable int
	// Force allows a non-empty Dir: the eight tables' files there are replaced.
	Force bool
	// RowGroupRows is the Parquet row group size (0: DefaultRowGroupRows).
	RowGroupRows int
	// Progress, if set, is called now and then on the generating goroutine
	// with the rows written so far over all tables and the expected total.
	Progress func(rows, total int64)

	// limit, if positive, stops each table after that many generator rows
	// (tests: a full table takes too long). The files then hold a prefix.
	limit int64
	// mem, if set, is the allocator the writers use (tests: a checked one).
	mem memory.Allocator
}

// errLimit ends a table at GenOptions.limit.
var errLimit = errors.New("tpch gen: row limit reached")

// ExpectedRows is the spec's row count of table at scale factor sf, 0 for
// an unknown table or a scale factor Generate refuses (lineitem's is
// approximate: the number of lines per order is random).
func ExpectedRows(table string, sf float64) int64 {
	sc, err := parseSF(sf)
	if err != nil {
		return 0
	}
	switch table {
	case "region":
		return 5
	case "nation":
		return 25
	case "supplier":
		return sc.rows(10_000)
	case "customer":
		return sc.rows(150_000)
	case "part":
		return sc.rows(200_000)
	case "partsupp":
		return 4 * sc.rows(200_000)
	case "orders":
		return sc.rows(1_500_000)
	case "lineitem":
		// About four lines per order (6,001,215 at SF 1).
		return sc.rows(1_500_000) * 6_001_215 / 1_500_000
	}
	return 0
}

// Generate writes the eight TPC-H tables at opts.SF into opts.Dir, as the
// reference dbgen makes them, and returns each table's row count. Each file
// is written as NAME.ext.tmp and renamed when complete, so an interrupted
// or failed run leaves no file that looks complete. Cancelling ctx stops it.
// Only one Generate runs at a time in a process.
func Generate(ctx context.Context, opts GenOptions) (map[string]int64, error) {
	sc, err := parseSF(opts.SF)
	if err != nil {
		return nil, err
	}
	switch opts.Format {
	case "":
		opts.Format = "parquet"
	case "parquet", "csv":
	default:
		return nil, qerr.Planf("tpch gen: unknown format %q (want parquet or csv)", opts.Format)
	}
	if opts.FilesPerTable < 0 {
		return nil, qerr.Planf("tpch gen: files per table must be at least 1, got %d", opts.FilesPerTable)
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.Dir == "" {
		return nil, qerr.Planf("tpch gen: no output folder given")
	}
	if err := prepareDir(opts.Dir, opts.Format, opts.Force); err != nil {
		return nil, err
	}

	genMu.Lock()
	defer genMu.Unlock()
	if err := initDbgen(sc); err != nil {
		return nil, err
	}

	var total int64
	for _, t := range Tables {
		total += ExpectedRows(t, opts.SF)
	}
	mem := opts.mem
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	g := &generator{ctx: ctx, opts: &opts, total: total, mem: mem, limit: opts.limit}
	units := map[string]int64{
		"part": sc.rows(200_000), "partsupp": sc.rows(200_000), "supplier": sc.rows(10_000), "customer": sc.rows(150_000),
		"orders": sc.rows(1_500_000), "lineitem": sc.rows(1_500_000), "nation": 25, "region": 5,
	}
	g.writers = map[string]*tableWriter{}
	for _, t := range Tables {
		g.writers[t] = g.newTableWriter(t, units[t])
	}
	defer g.abort() // removes any .tmp file left open by an error or cancellation

	loaders := map[dbgen.Table]dbgen.Loader{
		dbgen.TPart:   loader{g, g.writers["part"], appendPart},
		dbgen.TPsupp:  loader{g, g.writers["partsupp"], appendPartSupp},
		dbgen.TSupp:   loader{g, g.writers["supplier"], appendSupplier},
		dbgen.TCust:   loader{g, g.writers["customer"], appendCustomer},
		dbgen.TOrder:  loader{g, g.writers["orders"], appendOrder},
		dbgen.TLine:   loader{g, g.writers["lineitem"], appendLineitem},
		dbgen.TNation: loader{g, g.writers["nation"], appendNation},
		dbgen.TRegion: loader{g, g.writers["region"], appendRegion},
	}
	// Parts with their partsupp rows, and orders with their lines, come from
	// one generator row each, as in the reference dbgen. Every table has its
	// own random streams, so generating them one call at a time is the same.
	for _, t := range []dbgen.Table{dbgen.TPartPsupp, dbgen.TSupp, dbgen.TCust, dbgen.TOrderLine, dbgen.TNation, dbgen.TRegion} {
		if err := dbgen.DbGen(loaders, []dbgen.Table{t}); err != nil {
			if errors.Is(g.err, errLimit) {
				g.err = nil // a test's row limit ended the table early
				continue
			}
			// dbgen flattens the loader's error into text: prefer the original.
			if g.err != nil {
				return nil, g.err
			}
			return nil, qerr.Execf("tpch gen: %w", err)
		}
	}
	counts := map[string]int64{}
	for _, t := range Tables {
		w := g.writers[t]
		if err := w.finish(); err != nil {
			return nil, err
		}
		counts[t] = w.rows
	}
	if opts.Progress != nil {
		opts.Progress(g.written, g.total)
	}
	return counts, nil
}

// prepareDir creates dir, refusing a non-empty one unless force; with force
// it removes the eight tables' earlier files (NAME.parquet, NAME.csv, NAME/).
func prepareDir(dir, format string, force bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return qerr.IOf("tpch gen: %w", err)
	}
	if len(entries) > 0 {
		if !force {
			return qerr.Planf("tpch gen: output folder %s is not empty (%d entries); use --force to overwrite the tables in it", dir, len(entries))
		}
		for _, t := range Tables {
			for _, ext := range []string{".parquet", ".csv", ".parquet.tmp", ".csv.tmp"} {
				if err := os.Remove(filepath.Join(dir, t+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return qerr.IOf("tpch gen: %w", err)
				}
			}
			sub := filepath.Join(dir, t)
			files, err := os.ReadDir(sub)
			if err != nil {
				continue
			}
			for _, f := range files {
				n := f.Name()
				if strings.HasSuffix(n, ".parquet") || strings.HasSuffix(n, ".csv") || strings.HasSuffix(n, ".tmp") {
					if err := os.Remove(filepath.Join(sub, n)); err != nil {
						return qerr.IOf("tpch gen: %w", err)
					}
				}
			}
			os.Remove(sub) // only if now empty; anything else of the user's stays
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return qerr.IOf("tpch gen: %w", err)
	}
	return nil
}

// generator is the state of one Generate call.
type generator struct {
	ctx     context.Context // only read inside the DbGen call that Generate makes
	opts    *GenOptions
	mem     memory.Allocator
	writers map[string]*tableWriter
	written int64 // rows written over all tables
	total   int64
	ticks   int64
	limit   int64
	err     error // the first error of a loader, kept because dbgen flattens it
}

func (g *generator) abort() {
	for _, w := range g.writers {
		w.abort()
	}
}

// loader adapts a tableWriter to dbgen's Loader interface.
type loader struct {
	g   *generator
	w   *tableWriter
	add func(w *tableWriter, item any) int // appends the rows of one generator row, returns how many
}

func (l loader) Load(item any) error {
	g := l.g
	if g.err != nil {
		return g.err
	}
	if g.limit > 0 && l.w.seen >= g.limit {
		g.err = errLimit
		return errLimit
	}
	if err := l.w.next(); err != nil {
		g.err = err
		return err
	}
	n := l.add(l.w, item)
	l.w.rows += int64(n)
	l.w.pending += n
	g.written += int64(n)
	if l.w.pending >= g.opts.RowGroupRows {
		if err := l.w.flush(); err != nil {
			g.err = err
			return err
		}
	}
	if g.ticks++; g.ticks&4095 == 0 {
		if err := g.ctx.Err(); err != nil {
			g.err = qerr.Execf("tpch gen: %w", err)
			return g.err
		}
		if g.opts.Progress != nil {
			g.opts.Progress(g.written, g.total)
		}
	}
	return nil
}

// Flush does nothing: dbgen ignores Flush errors, so Generate finishes the
// files itself after DbGen returns.
func (l loader) Flush() error { return nil }

// tableWriter writes one table into one or more files.
type tableWriter struct {
	name    string
	schema  *arrow.Schema
	opts    *GenOptions
	mem     memory.Allocator
	units   int64 // generator rows that make the table, to split it into files
	seen    int64 // generator rows seen so far
	files   int
	rows    int64
	pending int // rows in b not yet written
	b       *array.RecordBuilder

	cur  int // index of the open file, -1 if none
	f    *os.File
	buf  *bufio.Writer
	path string // the open file's final name; it is written at path+".tmp"
	pw   *pqarrow.FileWriter
	cw   *csv.Writer
}

func (g *generator) newTableWriter(name string, units int64) *tableWriter {
	files := max(1, g.opts.FilesPerTable)
	if name == "nation" || name == "region" {
		files = 1
	}
	if g.limit > 0 {
		units = min(units, g.limit)
	}
	if int64(files) > units {
		files = int(units)
	}
	return &tableWriter{
		name: name, schema: schemas[name], opts: g.opts, mem: g.mem, units: units, files: files,
		b: array.NewRecordBuilder(g.mem, schemas[name]), cur: -1,
	}
}

// fileName is the final path of file i of the table.
func (w *tableWriter) fileName(i int) string {
	ext := "." + w.opts.Format
	if w.opts.FilesPerTable <= 1 {
		return filepath.Join(w.opts.Dir, w.name+ext)
	}
	return filepath.Join(w.opts.Dir, w.name, fmt.Sprintf("part-%05d%s", i, ext))
}

// next accounts for one generator row, moving to the next file when the
// row belongs to it (the table's generator rows are split evenly).
func (w *tableWriter) next() error {
	idx := int(w.seen * int64(w.files) / w.units)
	w.seen++
	if idx == w.cur {
		return nil
	}
	if w.cur >= 0 {
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	return w.openFile(idx)
}

// plainWriter hides the file's Close from the Parquet writer, which would
// otherwise close it before we flush and rename.
type plainWriter struct{ io.Writer }

func (w *tableWriter) openFile(i int) error {
	w.cur = i
	w.path = w.fileName(i)
	if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
		return qerr.IOf("tpch gen %s: %w", w.name, err)
	}
	f, err := os.Create(w.path + ".tmp")
	if err != nil {
		return qerr.IOf("tpch gen %s: %w", w.name, err)
	}
	w.f = f
	w.buf = bufio.NewWriterSize(f, 1<<20)
	switch w.opts.Format {
	case "csv":
		w.cw = csv.NewWriter(w.buf, w.schema, csv.WithComma('|'), csv.WithHeader(true), csv.WithNullWriter(""))
	default:
		props := parquet.NewWriterProperties(
			parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithStoreDecimalAsInteger(true),
			// flush writes a row group once RowGroupRows rows are pending,
			// after a whole generator row (an order's line items), so a row
			// group ends where an order ends. The writer's own limit sits
			// above that, or it would cut the last few rows of the order
			// into a row group of their own and split the order's key
			// across two row groups.
			parquet.WithMaxRowGroupLength(2*int64(w.opts.RowGroupRows)),
			parquet.WithAllocator(w.mem),
		)
		pw, err := pqarrow.NewFileWriter(w.schema, plainWriter{w.buf}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(w.mem)))
		if err != nil {
			return qerr.IOf("tpch gen %s: %w", w.name, err)
		}
		w.pw = pw
	}
	return nil
}

// flush writes the pending rows: one Parquet row group, or CSV lines.
func (w *tableWriter) flush() error {
	if w.pending == 0 {
		return nil
	}
	rec := w.b.NewRecordBatch()
	defer rec.Release()
	w.pending = 0
	var err error
	if w.pw != nil {
		err = w.pw.Write(rec)
	} else {
		err = w.cw.Write(rec)
	}
	if err != nil {
		return qerr.IOf("tpch gen %s: writing %s: %w", w.name, w.path, err)
	}
	return nil
}

// closeFile writes what is pending, closes the file and renames it into place.
func (w *tableWriter) closeFile() error {
	if err := w.flush(); err != nil {
		return err
	}
	var err error
	if w.pw != nil {
		err = w.pw.Close()
		w.pw = nil
	} else if w.cw != nil {
		if w.rows == 0 {
			// A CSV file gets its header with the first batch; write it for an empty file too.
			rec := w.b.NewRecordBatch()
			err = w.cw.Write(rec)
			rec.Release()
		}
		if err == nil {
			err = w.cw.Flush()
		}
		w.cw = nil
	}
	if err == nil {
		err = w.buf.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err == nil {
		err = os.Rename(w.path+".tmp", w.path)
	}
	if err != nil {
		os.Remove(w.path + ".tmp")
		return qerr.IOf("tpch gen %s: %w", w.name, err)
	}
	return nil
}

// finish closes the last file, creating the remaining empty ones if the
// table had fewer generator rows than files (it never does at SF >= 1).
func (w *tableWriter) finish() error {
	defer func() {
		w.b.Release()
		w.b = nil
	}()
	for w.cur < w.files-1 {
		if w.cur >= 0 {
			if err := w.closeFile(); err != nil {
				return err
			}
		}
		if err := w.openFile(w.cur + 1); err != nil {
			return err
		}
	}
	return w.closeFile()
}

// abort drops an open file's .tmp after an error; it is a no-op after finish.
func (w *tableWriter) abort() {
	if w.f != nil {
		if w.pw != nil {
			w.pw.Close()
			w.pw = nil
		}
		w.f.Close()
		os.Remove(w.path + ".tmp")
		w.f = nil
	}
	if w.b != nil {
		w.b.Release()
		w.b = nil
	}
}

// The append functions turn one dbgen row into builder appends. dbgen gives
// money in cents (DECIMAL(15,2) unscaled) and quantities as integers.

func (w *tableWriter) i64(col int, v int64) { w.b.Field(col).(*array.Int64Builder).Append(v) }
func (w *tableWriter) i32(col int, v int64) { w.b.Field(col).(*array.Int32Builder).Append(int32(v)) }
func (w *tableWriter) str(col int, v string) {
	w.b.Field(col).(*array.StringBuilder).Append(v)
}
func (w *tableWriter) cents(col int, v int64) {
	w.b.Field(col).(*array.Decimal128Builder).Append(decimal128.FromI64(v))
}
func (w *tableWriter) date(col int, v string) {
	w.b.Field(col).(*array.Date32Builder).Append(arrow.Date32(parseDate(v)))
}

func appendPart(w *tableWriter, item any) int {
	p := item.(*dbgen.Part)
	w.i64(0, int64(p.PartKey))
	w.str(1, p.Name)
	w.str(2, p.Mfgr)
	w.str(3, p.Brand)
	w.str(4, p.Type)
	w.i32(5, int64(p.Size))
	w.str(6, p.Container)
	w.cents(7, int64(p.RetailPrice))
	w.str(8, p.Comment)
	return 1
}

func appendPartSupp(w *tableWriter, item any) int {
	p := item.(*dbgen.Part)
	for _, ps := range p.S {
		w.i64(0, int64(ps.PartKey))
		w.i64(1, int64(ps.SuppKey))
		w.i64(2, int64(ps.Qty))
		w.cents(3, int64(ps.SCost))
		w.str(4, ps.Comment)
	}
	return len(p.S)
}

func appendSupplier(w *tableWriter, item any) int {
	s := item.(*dbgen.Supp)
	w.i64(0, int64(s.SuppKey))
	w.str(1, s.Name)
	w.str(2, s.Address)
	w.i32(3, int64(s.NationCode))
	w.str(4, s.Phone)
	w.cents(5, int64(s.Acctbal))
	w.str(6, s.Comment)
	return 1
}

func appendCustomer(w *tableWriter, item any) int {
	c := item.(*dbgen.Cust)
	w.i64(0, int64(c.CustKey))
	w.str(1, c.Name)
	w.str(2, c.Address)
	w.i32(3, int64(c.NationCode))
	w.str(4, c.Phone)
	w.cents(5, int64(c.Acctbal))
	w.str(6, c.MktSegment)
	w.str(7, c.Comment)
	return 1
}

func appendOrder(w *tableWriter, item any) int {
	o := item.(*dbgen.Order)
	w.i64(0, int64(o.OKey))
	w.i64(1, int64(o.CustKey))
	w.str(2, string(o.Status))
	w.cents(3, int64(o.TotalPrice))
	w.date(4, o.Date)
	w.str(5, o.OrderPriority)
	w.str(6, o.Clerk)
	w.i32(7, o.ShipPriority)
	w.str(8, o.Comment)
	return 1
}

func appendLineitem(w *tableWriter, item any) int {
	o := item.(*dbgen.Order)
	for i := range o.Lines {
		l := &o.Lines[i]
		w.i64(0, int64(l.OKey))
		w.i64(1, int64(l.PartKey))
		w.i64(2, int64(l.SuppKey))
		w.i64(3, int64(l.LCnt))
		w.cents(4, int64(l.Quantity)*100)
		w.cents(5, int64(l.EPrice))
		w.cents(6, int64(l.Discount))
		w.cents(7, int64(l.Tax))
		w.str(8, string(l.RFlag))
		w.str(9, string(l.LStatus))
		w.date(10, l.SDate)
		w.date(11, l.CDate)
		w.date(12, l.RDate)
		w.str(13, l.ShipInstruct)
		w.str(14, l.ShipMode)
		w.str(15, l.Comment)
	}
	return len(o.Lines)
}

func appendNation(w *tableWriter, item any) int {
	n := item.(*dbgen.Nation)
	w.i32(0, int64(n.Code))
	w.str(1, n.Text)
	w.i32(2, int64(n.Join))
	w.str(3, n.Comment)
	return 1
}

func appendRegion(w *tableWriter, item any) int {
	r := item.(*dbgen.Region)
	w.i32(0, int64(r.Code))
	w.str(1, r.Text)
	w.str(2, r.Comment)
	return 1
}

// parseDate turns dbgen's "YYYY-MM-DD" into days since 1970-01-01 (the
// days-from-civil algorithm: no time.Time per row).
func parseDate(s string) int32 {
	y := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	m := int(s[5]-'0')*10 + int(s[6]-'0')
	d := int(s[8]-'0')*10 + int(s[9]-'0')
	if m <= 2 {
		y--
	}
	era := y / 400 // years are positive here
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int32(era*146097 + doe - 719468)
}
