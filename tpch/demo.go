package tpch

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quiverdb/quiver"
)

// demoFS holds the eight TPC-H SF 0.01 tables as Parquet files.
//
//go:embed sf0.01/*.parquet
var demoFS embed.FS

// Tables are the TPC-H table names.
var Tables = []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"}

// DemoDir writes the embedded demo tables into dir (once: files already
// there with the right size are kept) and returns the directory.
func DemoDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("tpch: demo data: %w", err)
	}
	for _, t := range Tables {
		name := "sf0.01/" + t + ".parquet"
		data, err := fs.ReadFile(demoFS, name)
		if err != nil {
			return "", fmt.Errorf("tpch: demo data: %w", err)
		}
		dst := filepath.Join(dir, t+".parquet")
		if st, err := os.Stat(dst); err == nil && st.Size() == int64(len(data)) {
			continue
		}
		// Write then rename, so an interrupted run never leaves a file that looks complete.
		tmp := dst + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return "", fmt.Errorf("tpch: demo data: %w", err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return "", fmt.Errorf("tpch: demo data: %w", err)
		}
	}
	return dir, nil
}

// DefaultDemoDir is where the demo tables are unpacked: the user's cache
// directory, else the temp directory.
func DefaultDemoDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "quiver", "tpch-sf0.01")
}

// RegisterDir registers the eight TPC-H tables found as NAME.parquet in dir.
func RegisterDir(ctx context.Context, s *quiver.Session, dir string) error {
	for _, t := range Tables {
		if err := s.RegisterParquet(ctx, t, filepath.Join(dir, t+".parquet")); err != nil {
			return err
		}
	}
	return nil
}

// RegisterDemo unpacks the embedded SF 0.01 tables and registers them in s.
func RegisterDemo(ctx context.Context, s *quiver.Session) error {
	dir, err := DemoDir(DefaultDemoDir())
	if err != nil {
		return err
	}
	return RegisterDir(ctx, s, dir)
}

// QueryNumber parses "q01", "1" or "Q1" into 1..22.
func QueryNumber(s string) (int, error) {
	var n int
	_, err := fmt.Sscanf(strings.TrimPrefix(strings.ToLower(s), "q"), "%d", &n)
	if err != nil || n < 1 || n > 22 {
		return 0, fmt.Errorf("tpch: unknown query %q (want 1 to 22)", s)
	}
	return n, nil
}

//go:embed queries/*.sql
var queryFS embed.FS

// Query returns the text of TPC-H query n (1..22).
func Query(n int) (string, error) {
	if n < 1 || n > 22 {
		return "", fmt.Errorf("tpch: unknown query %d (want 1 to 22)", n)
	}
	b, err := fs.ReadFile(queryFS, fmt.Sprintf("queries/q%02d.sql", n))
	return string(b), err
}
