//go:build linux || darwin

package wasm

import "syscall"

// reserve maps n bytes of address space that cannot be accessed until protect makes it
// so; MAP_NORESERVE keeps the reservation from counting against the system's commit
// limit.
func reserve(n uint64) ([]byte, bool) {
	if n == 0 {
		return nil, false
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	return b, err == nil
}

// protect makes b readable and writable; its pages are committed when first touched.
func protect(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return syscall.Mprotect(b, syscall.PROT_READ|syscall.PROT_WRITE)
}

func unreserve(b []byte) { _ = syscall.Munmap(b) }
