package optimizer_test

import "flag"

// rewriteGolden reads the -rewrite flag, which the internal test package defines
// (both packages share one test binary).
func rewriteGolden() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}
