package physical

import (
	"encoding/json"

	"github.com/quiverdb/quiver/qerr"
)

// PartitionColumnsOption is the scan option naming the hive partition
// columns (comma-separated): the last fields of the scan's FileSchema,
// whose values come from each file's path rather than its contents.
const PartitionColumnsOption = "partition_columns"

// PartitionValuesKey is the scan option holding one file's values of the
// partition columns (see EncodePartitionValues).
func PartitionValuesKey(file string) string { return "partition_values:" + file }

// EncodePartitionValues encodes one file's partition values (text, nil for
// NULL) for PartitionValuesKey.
func EncodePartitionValues(vals []*string) string {
	b, _ := json.Marshal(vals) // a slice of string pointers always encodes
	return string(b)
}

// PartitionValues decodes a file's partition values from the scan options:
// n values, nil for NULL.
func (s *Scan) PartitionValues(file string, n int) ([]*string, error) {
	raw, ok := s.Options[PartitionValuesKey(file)]
	if !ok {
		return nil, qerr.Internalf("physical: scan of %s: no partition values for file %s", s.Table, file)
	}
	var vals []*string
	if err := json.Unmarshal([]byte(raw), &vals); err != nil || len(vals) != n {
		return nil, qerr.Internalf("physical: scan of %s: bad partition values for file %s: %q", s.Table, file, raw)
	}
	return vals, nil
}
