package physical

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// StagingMark is in the name of every write's staging directory; an
// executor creates, renames and deletes files only under such a directory
// (a plan from the wire names the paths).
const StagingMark = ".quiver-tmp-"

// CheckStaging validates a staging directory: an absolute, clean path to a
// hidden directory named with StagingMark.
func CheckStaging(staging string) error {
	base := filepath.Base(staging)
	if !filepath.IsAbs(staging) || filepath.Clean(staging) != staging || !strings.HasPrefix(base, ".") || !strings.Contains(base, StagingMark) {
		return qerr.Planf("write: %q is not a staging directory (a hidden %s directory)", staging, StagingMark)
	}
	return nil
}

// CheckWritePaths validates a write's target and staging directory: the
// target absolute and clean, the staging directory valid and beside it.
func CheckWritePaths(target, staging string) error {
	if target == "" || !filepath.IsAbs(target) || filepath.Clean(target) != target {
		return qerr.Planf("write: the target %q must be an absolute, clean path", target)
	}
	if err := CheckStaging(staging); err != nil {
		return err
	}
	if filepath.Dir(staging) != filepath.Dir(target) {
		return qerr.Planf("write: staging directory %q is not beside the target %q", staging, target)
	}
	return nil
}

// WriteSpec says how a FileSink lays out its files (see logical.WriteOptions).
type WriteSpec struct {
	Format       Format
	PartitionBy  []int // input columns written as key=value/ directories
	Compression  string
	RowGroupSize int64
	Delimiter    rune
	Header       bool
}

// FileSink writes each input partition's rows into new files under Staging
// (a hidden directory beside the write's target) and outputs, per file,
// its path relative to Staging and its row count. Every task attempt names
// its files afresh, so a retried task never overwrites what another
// attempt wrote; only the files a successful attempt reports are kept.
type FileSink struct {
	Input   Plan
	Staging string
	Spec    WriteSpec
}

// FileSinkSchema is a FileSink's output.
var FileSinkSchema = arrow.NewSchema([]arrow.Field{
	{Name: "file", Type: arrow.BinaryTypes.String},
	{Name: "rows", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// FileCommit takes the file lists of its single input partition (a
// FileSink's, gathered), moves those files from Staging to Target
// (replacing what is there only with Overwrite), removes Staging with any
// file no list named, and outputs one row: the rows written. Single: the
// target is the one file listed, else a directory.
type FileCommit struct {
	Input     Plan
	Staging   string
	Target    string
	Single    bool
	Overwrite bool
}

// FileCommitSchema is a FileCommit's output.
var FileCommitSchema = arrow.NewSchema([]arrow.Field{{Name: "count", Type: arrow.PrimitiveTypes.Int64}}, nil)

func (*FileSink) isPlan()               {}
func (*FileSink) Schema() *arrow.Schema { return FileSinkSchema }
func (s *FileSink) Children() []Plan    { return []Plan{s.Input} }
func (s *FileSink) WithChildren(c []Plan) Plan {
	n := *s
	n.Input = c[0]
	return &n
}
func (s *FileSink) OutputPartitions() int { return s.Input.OutputPartitions() }
func (s *FileSink) String() string {
	return fmt.Sprintf("FileSinkExec: format=%s, partition_by=%v, staging=%s", s.Spec.Format, s.Spec.PartitionBy, s.Staging)
}

func (*FileCommit) isPlan()               {}
func (*FileCommit) Schema() *arrow.Schema { return FileCommitSchema }
func (c *FileCommit) Children() []Plan    { return []Plan{c.Input} }
func (c *FileCommit) WithChildren(ch []Plan) Plan {
	n := *c
	n.Input = ch[0]
	return &n
}
func (*FileCommit) OutputPartitions() int { return 1 }
func (c *FileCommit) String() string {
	s := "FileCommitExec: target=" + c.Target
	if c.Single {
		s += ", single file"
	}
	if c.Overwrite {
		s += ", overwrite"
	}
	return s
}
