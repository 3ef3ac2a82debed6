//go:build !assert

package execop

// assertions is off in ordinary builds: the contract checks cost a pass
// over every batch's columns.
const assertions = false
