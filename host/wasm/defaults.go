package wasm

// Defaults of an Engine's options, of Vet's and of a guest's limits, where Options,
// VetOptions, the manifest and the engine's Limits leave them zero.
const (
	// DefaultMaxModuleBytes is the size cap of a module Vet accepts when
	// VetOptions.MaxBytes is zero: a Go guest built with -ldflags='-s -w' is a few MiB, a
	// TinyGo, Rust or C guest much less.
	DefaultMaxModuleBytes = 32 << 20
	// DefaultMemoryBudget is the memory (linear memory and call stacks) an Engine's pools
	// may keep when Options.MemoryBudgetBytes is zero.
	DefaultMemoryBudget = 1 << 30
	// DefaultMaxTableEntries is how many entries all of an instance's tables may hold
	// together when Options.MaxTableEntries is zero: 8 MiB of host memory. A Go guest's
	// table holds about 7,000.
	DefaultMaxTableEntries = 1 << 20
	// DefaultStackKiB is the call stack a guest's call may use when neither the manifest
	// nor the engine's Options.Limits set limits.stack_kib; MaxStackKiB is its ceiling
	// when the engine's Options.Ceilings set none.
	DefaultStackKiB = 4096
	MaxStackKiB     = 16384
)
