package catalog

import (
	"os"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// footers keeps what ParquetRowGroups read from Parquet footers, per file
// version, for the tables that do not carry it: a table decoded from a
// shipped logical plan (the scheduler's) would otherwise have every
// footer it scans read and decoded again for each query. A file changed
// since (size or modification time) is read afresh. Safe for concurrent
// use.
var footers = footerCache{entries: map[footerKey]footerInfo{}}

// footerCacheMax bounds the entries; past it the cache starts over.
const footerCacheMax = 4096

type footerCache struct {
	mu      sync.Mutex
	entries map[footerKey]footerInfo
	reads   int // footers read (not served from entries), for tests
}

type footerKey struct {
	path   string
	size   int64
	mtime  time.Time
	fields int
}

type footerInfo struct {
	rows   []int64
	ranges [][]KeyRange
}

// rowGroups returns path's row-group rows and, for fields > 0, the
// ranges of its first fields columns, from the cache or the footer. The
// results are shared: callers must not modify them.
func (c *footerCache) rowGroups(path string, fields int) ([]int64, [][]KeyRange, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	key := footerKey{path: path, size: fi.Size(), mtime: fi.ModTime(), fields: fields}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return e.rows, e.ranges, nil
	}
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, err
	}
	defer pf.Close()
	e.rows = rowGroupRows(pf)
	if fields > 0 {
		e.ranges = rowGroupRanges(pf, fields)
	}
	c.mu.Lock()
	c.reads++
	if len(c.entries) >= footerCacheMax {
		c.entries = map[footerKey]footerInfo{}
	}
	c.entries[key] = e
	c.mu.Unlock()
	return e.rows, e.ranges, nil
}
