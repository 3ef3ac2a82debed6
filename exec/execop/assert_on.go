//go:build assert

package execop

// assertions turns on the operator contract checks of checked operators
// (go test -tags assert).
const assertions = true
