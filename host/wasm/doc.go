// Package wasm runs scorers compiled to WebAssembly, on wazero, as sandboxed plugins.
//
// An [Engine] loads plugins (a manifest plus a .wasm artifact): it checks the artifact's
// sha256 against the manifest, compiles it once (through an on-disk compilation cache),
// refuses a module whose imports are not on the allow-list or whose exports do not speak
// ABI v1 (docs/ABI.md), and returns one host.Plugin per scorer the module carries.
// Plugin.Open gives a tenant a backend with its own pool of initialized instances; no
// instance ever serves two tenants, while compiled code is shared.
//
// # Why
//
//   - One wazero runtime per artifact: the memory limit is a runtime setting and limits
//     come from each plugin's manifest. The compilation cache is shared by all runtimes.
//   - WithCloseOnContextDone(true) always: without it a spinning guest ignores its
//     deadline and can stall the host at the next garbage collection.
//   - Pools, not one instance per call: instantiating a Go guest costs milliseconds and
//     megabytes, a call on a warm instance tens of microseconds. An instance is
//     discarded after a trap, a deadline, an exit, N calls, or when its memory grows past
//     three quarters of the limit, so a leaking or corrupted guest cannot live long.
//   - One export call per score: the guest keeps an input buffer the host reuses, and
//     replies stay in guest memory until the next call, so the host reads the result in
//     place with no alloc/free round trips.
//   - No filesystem, network, environment or arguments: the WASI configuration grants
//     none, and sock_* imports are refused before instantiation.
package wasm
