// Package wasm runs scorers compiled to WebAssembly, on wazero, as sandboxed plugins.
//
// An [Engine] loads plugins (a manifest plus a .wasm artifact): it holds the manifest's
// limits to the engine's ceilings, checks the artifact's sha256, adds the checks that let
// the host stop a guest (interrupt.go) and bound its call stack (stack.go), compiles it once (through an on-disk compilation
// cache), refuses a module whose imports are not on the allow-list or whose exports do not
// speak ABI v1 (docs/ABI.md), and returns one host.Plugin per scorer the module carries.
// Plugin.Open gives a tenant a backend drawing on the tenant's pool of initialized
// instances of the artifact; no instance ever serves two tenants, while compiled code is
// shared. One memory budget bounds what all pools keep (Options.MemoryBudgetBytes).
// [Vet] checks a module a tenant uploads before it is accepted.
//
// # Why
//
//   - One wazero runtime per artifact: the memory limit is a runtime setting and limits
//     come from each plugin's manifest. The compilation cache is shared by all runtimes.
//   - Deadlines through checks the host adds to the module, not WithCloseOnContextDone:
//     wazero's option leaves native code at every loop iteration and made calls 3-8x
//     slower; the added checks cost a decrement and a branch, and still return to Go
//     often enough that a spinning guest cannot stall the host's garbage collector.
//   - The call stack bounded by a counter the host adds, as the deadline: wazero grows a
//     call's stack to about 400 MB with no setting. Each function is weighed at what
//     wazero's compiler can make its frame take; only functions that can recurse or that
//     the host calls pay a charge, and a call past limits.stack_kib fails limit_exceeded.
//   - Linear memory reserved with mmap and committed as the guest grows: no copy per
//     memory.grow, resident memory bounded by each instance's limit, returned at close.
//   - Pools per (tenant, artifact), not one instance per call: instantiating a Go guest
//     costs milliseconds and megabytes, a call on a warm instance microseconds. An
//     instance is discarded after a trap, a deadline, an exit, N calls, or when its
//     memory grows past three quarters of the limit.
//   - One export call per score: the guest keeps an input buffer the host reuses, and
//     replies stay in guest memory until the next call, so the host reads the result in
//     place with no alloc/free round trips.
//   - A budget across pools, not per pool: with many tenants most pools are idle, and
//     what matters is the memory all of them keep; the least recently used idle instances
//     go first, and a call never waits for the budget (docs/SANDBOX.md).
//   - Vet compiles in a child process (this program again): wazero's compiler takes no
//     deadline or memory cap, so a process the host can kill is the only bound on a
//     module built to be costly to compile.
//   - No filesystem, network, environment or arguments: the WASI configuration grants
//     none, and sock_* imports are refused before instantiation. Random bytes come from
//     the host's crypto/rand.
package wasm
