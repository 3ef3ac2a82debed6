package quiver

// SetResultReadyHook sets the function Collect calls between a job's end
// and the read of its result, and returns a function that removes it.
func SetResultReadyHook(f func()) (restore func()) {
	resultReadyHook = f
	return func() { resultReadyHook = nil }
}
