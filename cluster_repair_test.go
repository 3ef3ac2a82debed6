package quiver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver"
)

// TestClusterCachePartialRebuild: with a cache spread over two executors,
// kill -9 one of them. The entry becomes partial (SHOW CACHES says so), and
// the next query rebuilds only the lost partitions — the repair job's final
// stage runs one task per lost partition — while the surviving partitions
// are read where they are; the answer is right and the entry whole again.
func TestClusterCachePartialRebuild(t *testing.T) {
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "2s", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	// Grouped, the data is hash-partitioned four ways: a stage of one scan
	// task feeds the final stage's four.
	const aggSQL = "SELECT l_orderkey, sum(l_quantity) AS q FROM lineitem GROUP BY l_orderkey"
	sqlRows(t, s, "CACHE TABLE agg AS "+aggSQL)
	want := localAnswer(t, "SELECT count(*), sum(q) FROM ("+aggSQL+") r")
	q := "SELECT count(*), sum(q) FROM agg"
	before := cacheRow(t, s, "agg")
	if len(before.Executors) != 2 || before.Partitions < 2 {
		t.Fatalf("the cache is not spread over both executors: %+v", before)
	}
	// Which executor holds which partitions: the build's final stage.
	var jobs []struct {
		ID          string `json:"id"`
		BuildsCache string `json:"builds_cache"`
		Name        string `json:"name"`
	}
	if err := getJSON(t, "http://"+rest+"/api/jobs", &jobs); err != nil {
		t.Fatal(err)
	}
	finalTasks := func(id string) map[string]int {
		var detail struct {
			Stages []struct {
				Final bool `json:"final"`
				Tasks []struct {
					Partition int    `json:"partition"`
					Executor  string `json:"executor"`
					State     string `json:"state"`
				} `json:"tasks"`
			} `json:"stages"`
		}
		if err := getJSON(t, "http://"+rest+"/api/job/"+id, &detail); err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, st := range detail.Stages {
			if st.Final {
				for _, tk := range st.Tasks {
					per[tk.Executor]++
				}
			}
		}
		return per
	}
	var build string
	for _, j := range jobs {
		if j.BuildsCache == before.CacheID {
			build = j.ID
		}
	}
	if build == "" {
		t.Fatalf("no build job of %s in %+v", before.CacheID, jobs)
	}
	held := finalTasks(build)
	victimID := before.Executors[0]
	lost := held[victimID]
	if lost == 0 || lost == before.Partitions {
		t.Fatalf("partitions per executor %v: want some on each", held)
	}
	c.executorByID(t, victimID).kill()
	waitFor(t, "the cache to be partial", func() bool { return cacheRow(t, s, "agg").State == "partial" })
	if m, reads := explainMark(t, s, q, "agg"); !strings.HasPrefix(m, "partial: ") || !strings.Contains(m, "lost with an executor") || reads {
		t.Fatalf("EXPLAIN marks the partial cache [%s], reads it as it is: %v", m, reads)
	}

	ctx := context.Background()
	df, err := s.SQL(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var info quiver.QueryInfo
	var rows [][]string
	for b, err := range df.StreamInfo(ctx, &info) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, render(df.Schema(), []arrow.RecordBatch{b})...)
	}
	if len(info.Caches) != 1 || info.Caches[0].Outcome != "partial" || fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("after the kill: caches %+v rows %v, want partial %v", info.Caches, rows, want)
	}
	if line := info.Caches[0].String(); !strings.HasPrefix(line, "cache: partial agg (partition") || !strings.Contains(line, "lost with an executor; those rebuilt: ") {
		t.Errorf("the query's cache line: %q", line)
	}
	if err := getJSON(t, "http://"+rest+"/api/jobs", &jobs); err != nil {
		t.Fatal(err)
	}
	var repairs []string
	for _, j := range jobs {
		if strings.HasPrefix(j.Name, "cache repair") {
			repairs = append(repairs, j.ID)
		}
		if j.BuildsCache == before.CacheID && j.ID != build && !strings.HasPrefix(j.Name, "cache repair") {
			t.Fatalf("the cache was built again whole: job %+v", j)
		}
	}
	if len(repairs) != 1 {
		t.Fatalf("repair jobs %v, want one", repairs)
	}
	ran := finalTasks(repairs[0])
	n := 0
	for ex, k := range ran {
		if ex == victimID {
			t.Fatalf("a repair task ran on the killed executor: %v", ran)
		}
		n += k
	}
	if n != lost {
		t.Fatalf("the repair's final stage ran %d tasks, want the %d lost partitions", n, lost)
	}
	after := cacheRow(t, s, "agg")
	if after.State != "materialized" || after.Partitions != before.Partitions || after.Rows != before.Rows || !after.Created.Equal(before.Created) {
		t.Fatalf("after the repair: %+v, before %+v", after, before)
	}
	if o, rows := outcome(t, s, q); o != "hit" || fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("after the repair: outcome %q rows %v, want a hit of %v", o, rows, want)
	}
	if st, err := s.CacheStats(ctx); err != nil || st.Partials != 1 || st.Repairs != 1 || st.Materializations != 1 {
		t.Fatalf("stats %+v %v, want one partial entry repaired and one build", st, err)
	}
}
