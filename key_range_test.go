package quiver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/quiverdb/quiver/exec/scan"
)

// TestJoinKeyRangePrunesProbeScan: a hash join whose build side is
// collected first tells the Parquet scan under its probe side the range of
// its build keys, and the scan skips the row groups outside it. The fact
// table f(k, v) holds k = 0..9999 in order (every 97th k NULL) in row groups
// of 1000 rows. For each build side d, each query's result must equal the
// answer computed here from the data, and the count of row groups skipped
// that way must move exactly when the range rules some out: a tiny range,
// an empty build, a build of NULL keys only, NULL keys beside values, a
// range covering every row group; inner, left (build preserved), semi and
// a join whose probe side is itself a join.
func TestJoinKeyRangePrunesProbeScan(t *testing.T) {
	const rows, group = 10000, 1000
	var fact [][]any
	for i := 0; i < rows; i++ {
		var k any = int64(i)
		if i%97 == 0 {
			k = nil
		}
		fact = append(fact, []any{k, int64(i % 7)})
	}
	schema, batches := fpBatches(t, []fpCol{{"k", arrow.PrimitiveTypes.Int64}, {"v", arrow.PrimitiveTypes.Int64}}, fact, 700)
	path := filepath.Join(t.TempDir(), "f.parquet")
	fpWriteParquet(t, path, schema, batches, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(group)))
	release(batches)

	// per k of the fact table: its v, for the expected answers
	vOf := func(k int64) (int64, bool) {
		if k < 0 || k >= rows || k%97 == 0 {
			return 0, false
		}
		return k % 7, true
	}
	builds := []struct {
		name   string
		keys   []any // d.k values (nil: NULL)
		prunes bool  // some row group lies outside the keys' range
	}{
		{"tiny", []any{int64(1500), int64(1510), int64(1500)}, true},
		{"empty", nil, true},
		{"null keys only", []any{nil, nil}, true},
		{"null and a value", []any{nil, int64(2500)}, true},
		{"every row group", []any{int64(5), int64(9995)}, false},
		{"outside the data", []any{int64(-5), int64(20000)}, false},
	}
	for _, parts := range []int{1, 3} {
		for _, batch := range []int{7, 1024} {
			for _, b := range builds {
				t.Run(fmt.Sprintf("%s/partitions=%d/batch=%d", b.name, parts, batch), func(t *testing.T) {
					s := fpSession(t, batch, parts)
					if err := s.RegisterParquet(context.Background(), "f", path); err != nil {
						t.Fatal(err)
					}
					var drows [][]any
					for i, k := range b.keys {
						drows = append(drows, []any{k, int64(i)})
					}
					if len(drows) == 0 {
						drows = [][]any{{int64(1), int64(0)}} // filtered out below
					}
					fpRegister(t, s, "d0", []fpCol{{"k", arrow.PrimitiveTypes.Int64}, {"id", arrow.PrimitiveTypes.Int64}}, drows, 10)
					sqlRows(t, s, "CREATE VIEW d AS SELECT * FROM d0 WHERE "+map[bool]string{true: "id < 0", false: "id >= 0"}[len(b.keys) == 0])

					var innerCount, innerSum, semiCount int64
					perD := map[int64]int64{} // d.id → matches (left join)
					seen := map[int64]bool{}
					for i, k := range b.keys {
						perD[int64(i)] = 0
						if k == nil {
							continue
						}
						if v, ok := vOf(k.(int64)); ok {
							innerCount++
							innerSum += v
							perD[int64(i)] = 1
							if !seen[k.(int64)] {
								seen[k.(int64)], semiCount = true, semiCount+1
							}
						}
					}
					sumText := "" // render shows NULL as empty
					if innerCount > 0 {
						sumText = strconv.FormatInt(innerSum, 10)
					}
					check := func(q string, want [][]string) {
						t.Helper()
						before := scan.RowGroupsSkippedByKeyRange("f")
						got := sqlRows(t, s, q)
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("%s:\n got %v\nwant %v", q, got, want)
						}
						skipped := scan.RowGroupsSkippedByKeyRange("f") - before
						if (skipped > 0) != b.prunes {
							t.Errorf("%s: %d row groups skipped by the build keys' range, want some: %v", q, skipped, b.prunes)
						}
					}
					check("SELECT count(*), sum(f.v) FROM d JOIN f ON d.k = f.k",
						[][]string{{strconv.FormatInt(innerCount, 10), sumText}})
					check("SELECT count(*) FROM f WHERE f.k IN (SELECT k FROM d)",
						[][]string{{strconv.FormatInt(semiCount, 10)}})
					var left [][]string
					for i := range b.keys {
						left = append(left, []string{strconv.Itoa(i), strconv.FormatInt(perD[int64(i)], 10)})
					}
					check("SELECT d.id, count(f.v) FROM d LEFT JOIN f ON d.k = f.k GROUP BY d.id ORDER BY d.id", left)
					// the probe side is itself a join (f with a second copy of d's keys)
					check("SELECT count(*) FROM d JOIN (SELECT f.k, f.v FROM f JOIN (SELECT DISTINCT k FROM d) d2 ON f.k = d2.k) x ON d.k = x.k",
						[][]string{{strconv.FormatInt(innerCount, 10)}})
				})
			}
		}
	}
}
