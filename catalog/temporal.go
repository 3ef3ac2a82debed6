package catalog

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/temporal"
)

// NormalTemporal gives a file's timestamp and time columns the types SQL
// has for them: TIMESTAMP is microseconds without a time zone, a column
// with a zone (Parquet's isAdjustedToUTC) is TIMESTAMPTZ, microseconds in
// zone UTC (temporal.FileTimestamp), TIME is Time64 of microseconds. The
// scan converts the values as it reads.
func NormalTemporal(s *arrow.Schema) *arrow.Schema {
	fs := s.Fields()
	changed := false
	for i, f := range fs {
		switch f.Type.(type) {
		case *arrow.TimestampType:
			if t := temporal.FileTimestamp(f.Type.(*arrow.TimestampType)); !arrow.TypeEqual(f.Type, t) {
				fs[i].Type, changed = t, true
			}
		case *arrow.Time32Type, *arrow.Time64Type:
			if t := arrow.FixedWidthTypes.Time64us; !arrow.TypeEqual(f.Type, t) {
				fs[i].Type, changed = t, true
			}
		}
	}
	if !changed {
		return s
	}
	return arrow.NewSchema(fs, nil)
}
