package quiver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver"
)

// TestTimestampTZCluster: TIMESTAMPTZ values cross the plan codec, the
// shuffle between two executors and the Flight results as UTC instants
// typed timestamp[us] with the session's zone, and a query grouping,
// joining and truncating them in that zone gives the answer local
// execution gives.
func TestTimestampTZCluster(t *testing.T) {
	ctx := context.Background()
	const q = `SELECT d, count(*) AS n, min(t) AS first, max(t + INTERVAL '1 day') AS last_next
		FROM (SELECT a.t, date_trunc('day', a.t) AS d FROM tzv a JOIN tzv b ON a.t = b.t) AS x
		GROUP BY d ORDER BY d`
	view := `CREATE VIEW tzv AS SELECT CAST(column1 AS TIMESTAMPTZ) AS t FROM (VALUES
		('2024-03-09 23:30:00'), ('2024-03-10 00:30:00'), ('2024-03-10 03:30:00'), ('2024-03-10 05:00:00+00'),
		('2024-11-03 01:30:00-04'), ('2024-11-03 01:30:00-05'), (NULL)) AS v`
	run := func(opts ...quiver.Option) ([][]string, []arrow.RecordBatch) {
		s := newTPCHSession(t, opts...)
		for _, st := range []string{"SET TIME ZONE 'America/New_York'", view} {
			if _, err := s.SQL(ctx, st); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
		}
		df, err := s.SQL(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		batches, err := df.Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, b := range batches {
				b.Release()
			}
		})
		return sqlRows(t, s, q), batches
	}
	want, _ := run(quiver.WithLocalExecution())
	if fmt.Sprint(want) != "[[2024-03-09 00:00:00-05 1 2024-03-09 23:30:00-05 2024-03-10 23:30:00-04] "+
		"[2024-03-10 00:00:00-05 3 2024-03-10 00:00:00-05 2024-03-11 03:30:00-04] "+
		"[2024-11-03 00:00:00-04 2 2024-11-03 01:30:00-04 2024-11-04 01:30:00-05]]" {
		t.Errorf("local: %v", want)
	}
	got, batches := run(quiver.WithStandaloneCluster(2), quiver.WithExchangeMode(quiver.ExchangeShuffle), quiver.WithTargetPartitions(3), quiver.WithBatchSize(2))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("two executors: got %v, local gives %v", got, want)
	}
	if len(batches) == 0 {
		t.Fatal("no batches")
	}
	f := batches[0].Schema().Field(2)
	if ts, ok := f.Type.(*arrow.TimestampType); !ok || ts.Unit != arrow.Microsecond || ts.TimeZone != "America/New_York" {
		t.Fatalf("column first: type %s, want timestamp[us, tz=America/New_York]", f.Type)
	}
	// The values are the UTC instants: 2024-03-10 04:30:00 UTC is 23:30 EST.
	for _, b := range batches {
		if b.NumRows() > 0 {
			if v := b.Column(2).(*array.Timestamp).Value(0); v.ToTime(arrow.Microsecond).UTC().Format("2006-01-02 15:04:05") != "2024-03-10 04:30:00" {
				t.Errorf("first value %v, want the instant 2024-03-10 04:30:00 UTC", v.ToTime(arrow.Microsecond).UTC())
			}
			break
		}
	}
}
