// Package sdk is the contract between scorekit's host and the scorers it runs.
//
// A scorer grades one [Run] (what an agent was asked, what it answered, the evidence it
// retrieved) and returns a [Result]: a status that separates "scored" from "skipped" and
// "failed", a score in the scorer's declared native range, optional dimensions, a reason,
// machine-readable flags and the steps it took.
//
// The same Go source serves every runtime: linked into the host (native), compiled to a
// WebAssembly reactor, or built as an out-of-process plugin. The host never trusts what a
// scorer returns: it validates it, maps the native range to [0, 1], applies citation clamps,
// recomputes the weighted overall score and computes Passed. Scorer authors therefore return
// raw, honest numbers and let the host do the bookkeeping.
//
// The package depends on the standard library only, so it compiles for GOOS=wasip1.
//
// # Lifecycle
//
// The host drives every scorer through these steps:
//
//  1. Construct: the registry calls the scorer's factory (a plain func() Scorer).
//  2. Describe: the host calls [Scorer.Info] once and keeps the [Info]; it must not change.
//  3. Configure (optional): if the scorer implements [Configurer], the host validates the
//     caller's config against Info.ConfigSchema, merges Info.Defaults under it, and calls
//     Configure once with the result, before the first Score.
//  4. Score: the host calls [Scorer.Score] for each run, under a deadline. Native scorers
//     may be called concurrently and must be safe for that; WASM and process instances are
//     called one at a time.
//  5. Close (optional): if the scorer implements io.Closer, the host calls Close when it
//     unloads the scorer.
package sdk
