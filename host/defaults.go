package host

import "time"

// Defaults of a Host where its options leave them unset; the run limits' defaults are
// beside RunLimits.
const (
	// DefaultTimeout is the deadline of one scorer call when nothing sets another. Every
	// runtime uses it, so a run never scores in one runtime and times out in another
	// because of defaults.
	DefaultTimeout = 30 * time.Second
	// DefaultTenant is the tenant of an OpenOptions without one.
	DefaultTenant = "default"
	// DefaultParallelLoads is how many manifests [LoadPlugins] loads at once unless told
	// otherwise: twelve WASM modules that each spin in _initialize to a 10 s load deadline
	// list in 20 s rather than 120 s (BENCHMARKS.md).
	DefaultParallelLoads = 8
)
