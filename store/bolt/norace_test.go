//go:build !race

package bolt

// raceBuild reports a -race build, which allocates more (the allocation
// bounds of the tests allow for it).
const raceBuild = false
