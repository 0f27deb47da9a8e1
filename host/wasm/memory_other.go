//go:build !linux && !darwin

package wasm

// Elsewhere linear memory lives in the Go heap (linearMemory's fallback).
func reserve(uint64) ([]byte, bool) { return nil, false }
func protect([]byte) error          { return nil }
func unreserve([]byte)              {}
