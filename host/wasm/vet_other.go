//go:build !linux

package wasm

import (
	"errors"
	"os/exec"
	"runtime"
)

func vetSysProcAttr(*exec.Cmd) {}

// VetMemoryBound says how Vet bounds the compiler's memory on this machine: here it
// cannot, and Vet refuses to run.
func VetMemoryBound() string {
	return "none on " + runtime.GOOS + ": Vet refuses to run (it needs Linux's cgroups or RLIMIT_AS)"
}

type vetLimiter struct{}

// newVetLimiter refuses to vet: without a bound on the compiler's memory, vetting a
// hostile module could exhaust the host's, which is what vetting is for.
func newVetLimiter(int64) (*vetLimiter, error) {
	return nil, errors.New("vetting bounds the compiler's memory with Linux's cgroups or RLIMIT_AS; on " + runtime.GOOS + " publish modules through a Linux host")
}

func (*vetLimiter) rlimitAS() bool              { return false }
func (*vetLimiter) start(*exec.Cmd) error       { return nil }
func (*vetLimiter) kill(*exec.Cmd)              {}
func (*vetLimiter) outOfMemory() bool           { return false }
func (*vetLimiter) close()                      {}
func (*vetLimiter) allowGuest(_, _ int64) error { return nil }

func limitSelf(vetRequest) error { return nil }

func allowGuestMemory(vetRequest) error { return nil }
