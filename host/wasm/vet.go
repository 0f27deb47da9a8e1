package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// VetOptions say how [Vet] checks a module.
type VetOptions struct {
	// Ceilings are the most the module may use while it answers its Info (memory, time,
	// result size), as an Engine's Options.Ceilings. Optional. Zero fields take
	// DefaultCeilings.
	Ceilings host.Limits
	// MaxBytes caps the module's size. Optional. Default is no cap.
	MaxBytes int64
	// CompileTimeout bounds compiling the module. Optional. Default is no bound.
	CompileTimeout time.Duration
	// CompileMemoryBytes bounds the memory compiling takes. Optional. This version
	// compiles in the calling process and cannot bound it; it is honoured where the
	// module is compiled in a child process.
	CompileMemoryBytes int64
}

// Errors of Vet callers branch on.
var (
	// ErrModuleTooLarge: the module is larger than VetOptions.MaxBytes.
	ErrModuleTooLarge = errors.New("module too large")
	// ErrNotWASM: the bytes are not a WebAssembly module.
	ErrNotWASM = errors.New("not a WebAssembly module")
	// ErrCompileTimeout: compiling took longer than VetOptions.CompileTimeout.
	ErrCompileTimeout = errors.New("compiling took too long")
)

// Vet checks a module a tenant uploads before anything runs it for real: its size, that
// it compiles (within o.CompileTimeout), that it imports only what the sandbox grants and
// exports ABI v1, and that it answers its Info within o.Ceilings. It returns the scorers
// the module declares. Each call compiles in a cache of its own, so how long it takes
// never depends on modules other tenants published.
//
// This version compiles in the calling process: past the timeout it returns
// ErrCompileTimeout while the compiler finishes in the background, and it does not bound
// the compiler's memory.
func Vet(ctx context.Context, bin []byte, o VetOptions) ([]sdk.Info, error) {
	if o.MaxBytes > 0 && int64(len(bin)) > o.MaxBytes {
		return nil, fmt.Errorf("vet: %w: %d bytes, at most %d are accepted; strip debug sections (wasm-opt --strip-debug, or go build -ldflags=-s) or split the module",
			ErrModuleTooLarge, len(bin), o.MaxBytes)
	}
	if !bytes.HasPrefix(bin, []byte("\x00asm")) {
		return nil, fmt.Errorf("vet: %w: the bytes do not start with \\0asm; build it with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, or for wasm32-wasi", ErrNotWASM)
	}
	dir, err := os.MkdirTemp("", "scorekit-vet-")
	if err != nil {
		return nil, fmt.Errorf("vet: %w", err)
	}
	sum := sha256.Sum256(bin)
	path := filepath.Join(dir, "module.wasm")
	if err := os.WriteFile(path, bin, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("vet: %w", err)
	}
	type answer struct {
		infos []sdk.Info
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		// The folder goes with the engine, whether or not the caller waited for it.
		defer os.RemoveAll(dir)
		e, err := NewEngine(context.WithoutCancel(ctx), Options{CacheDir: filepath.Join(dir, "cache"), Ceilings: o.Ceilings, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer e.Close(context.WithoutCancel(ctx))
		ps, err := e.Load(context.WithoutCancel(ctx), host.Manifest{Name: "module", Runtime: host.RuntimeWASM, Artifact: path, SHA256: hex.EncodeToString(sum[:])})
		var a answer
		a.err = err
		for _, p := range ps {
			a.infos = append(a.infos, p.Info())
		}
		done <- a
	}()
	var timer <-chan time.Time
	if o.CompileTimeout > 0 {
		t := time.NewTimer(o.CompileTimeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case a := <-done:
		if a.err != nil {
			return nil, fmt.Errorf("vet: %w", a.err)
		}
		return a.infos, nil
	case <-timer:
		return nil, fmt.Errorf("vet: %w: not loaded within %s; make the module smaller", ErrCompileTimeout, o.CompileTimeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("vet: %w", ctx.Err())
	}
}
