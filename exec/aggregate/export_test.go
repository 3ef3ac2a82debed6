package aggregate

// SetSkipConfig sets the thresholds new partial aggregates take
// (skip_partial.go) and returns the function that restores them.
func SetSkipConfig(ratio float64, probeRows int64) (restore func()) {
	old := skipConfig
	skipConfig.ratio, skipConfig.probeRows = ratio, probeRows
	return func() { skipConfig = old }
}
