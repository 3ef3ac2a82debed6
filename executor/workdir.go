package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/exec/shuffle"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// checkJobID returns an error unless id is a valid job id: anything else
// is refused before it gets near a path.
func checkJobID(id string) error {
	if !physical.ValidJobID(id) {
		return qerr.Execf("executor: invalid job id %q: want %s", id, physical.JobIDSyntax)
	}
	return nil
}

// shuffleFilePath rebuilds the path of a shuffle file from its coordinates
// (shuffle.FilePath: {work}/{job}/{stage}/{out}/data-{map}.arrow). The
// caller has validated job and the non-negative ints.
func shuffleFilePath(workDir, job string, stage, out, mapPart int) string {
	return shuffle.FilePath(workDir, job, stage, out, mapPart)
}

// within reports whether path, once cleaned, lies strictly inside dir.
func within(dir, path string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	if err != nil {
		return false
	}
	return rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// removeJobData deletes {work}/{job}/{stage} for each stage in stages (every
// stage directory of the job when stages is empty), except the stages in
// keep. Entries of the job directory that are not stage numbers are left
// alone. The job directory itself goes when it ends up empty. It returns
// the stages it removed. Each stage directory is forgotten by maps (when
// not nil) before it is removed, so no later reader shares a mapping of a
// removed file; readers and batches over one keep it until released.
func removeJobData(workDir, job string, stages []int, keep map[int]bool, maps *filemap.FileMaps) ([]int, error) {
	if err := checkJobID(job); err != nil {
		return nil, err
	}
	jobDir := filepath.Join(workDir, job)
	if !within(workDir, jobDir) {
		return nil, qerr.Internalf("executor: job directory %s escapes the work dir", jobDir)
	}
	if len(stages) == 0 {
		entries, err := os.ReadDir(jobDir)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, qerr.IOf("executor: removing data of job %s: %w", job, err)
		}
		for _, e := range entries {
			if n, err := strconv.Atoi(e.Name()); err == nil && n >= 0 && e.IsDir() && strconv.Itoa(n) == e.Name() {
				stages = append(stages, n)
			}
		}
	}
	var removed []int
	var errs []error
	for _, s := range stages {
		if s < 0 {
			errs = append(errs, fmt.Errorf("negative stage id %d", s))
			continue
		}
		if keep[s] {
			continue
		}
		dir := filepath.Join(jobDir, strconv.Itoa(s))
		if !within(workDir, dir) {
			continue
		}
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if maps != nil {
			maps.Forget(dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, s)
	}
	// Remove the job directory only if nothing (e.g. a pinned stage) is left.
	_ = os.Remove(jobDir)
	if err := errors.Join(errs...); err != nil {
		return removed, qerr.IOf("executor: removing data of job %s: %w", job, err)
	}
	return removed, nil
}

// sweepOrphans deletes the job directories of workDir that no live job or
// cache owns: every directory named like a job id that is not in keep and
// was last modified before cutoff (zero: any time). A job directory created
// after cutoff may belong to a task launched since the scheduler computed
// keep, so it stays. Other entries of the work dir are never touched. Each
// stage directory is forgotten by maps (when not nil) first. It returns the
// jobs removed, sorted.
func sweepOrphans(workDir string, keep map[string]bool, cutoff time.Time, maps *filemap.FileMaps) ([]string, error) {
	entries, err := os.ReadDir(workDir)
	if err != nil {
		return nil, qerr.IOf("executor: sweeping work dir %s: %w", workDir, err)
	}
	var removed []string
	var errs []error
	for _, d := range entries {
		job := d.Name()
		if !d.IsDir() || !physical.ValidJobID(job) || keep[job] {
			continue
		}
		if !cutoff.IsZero() {
			info, err := d.Info()
			if err != nil || !info.ModTime().Before(cutoff) {
				continue
			}
		}
		if _, err := removeJobData(workDir, job, nil, nil, maps); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.RemoveAll(filepath.Join(workDir, job)); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, job)
	}
	sort.Strings(removed)
	if err := errors.Join(errs...); err != nil {
		return removed, qerr.IOf("executor: sweeping work dir %s: %w", workDir, err)
	}
	return removed, nil
}

// heldJobs lists the job directories of workDir (named like job ids),
// sorted, for the scheduler to reconcile its cache entries with.
func heldJobs(workDir string) ([]string, error) {
	entries, err := os.ReadDir(workDir)
	if err != nil {
		return nil, qerr.IOf("executor: listing work dir %s: %w", workDir, err)
	}
	var out []string
	for _, d := range entries {
		if d.IsDir() && physical.ValidJobID(d.Name()) {
			out = append(out, d.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}
