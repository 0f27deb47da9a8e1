package wasm

import "errors"

// Errors callers branch on, with errors.Is. Load errors wrap them and say what fixes the
// problem.
var (
	// ErrForbiddenImport: the module imports something the sandbox does not grant.
	ErrForbiddenImport = errors.New("forbidden import")
	// ErrMissingExport: the module lacks an export ABI v1 requires.
	ErrMissingExport = errors.New("missing export")
	// ErrReservedExport: the module exports a name the host reserves for itself.
	ErrReservedExport = errors.New("reserved export")
	// ErrTooLarge: the module declares more than an instance may hold.
	ErrTooLarge = errors.New("module too large for its limits")
	// ErrClosed: the engine, plugin or backend was closed.
	ErrClosed = errors.New("closed")
	// ErrRefused: Vet refuses the module; the message says why and what fixes it, names
	// no host path, and may be shown to whoever uploaded the module. Any other error
	// from Vet is the host's (a child that could not start, a cache that cannot be
	// written) and is for the operator's log.
	ErrRefused = errors.New("module refused")
	// ErrUploadTooLarge: the module is over VetOptions.MaxBytes (wrapped with ErrRefused).
	ErrUploadTooLarge = errors.New("upload too large")
)
