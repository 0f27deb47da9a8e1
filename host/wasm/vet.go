package wasm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// VetOptions bounds [Vet]. Zero fields take the defaults named on each.
type VetOptions struct {
	// Ceilings are the most the module may run under (the tenant's ceilings): Limits
	// asking for more are refused. Optional. Zero fields take DefaultCeilings.
	Ceilings host.Limits
	// MaxBytes caps the module's size. Optional. Default is DefaultMaxModuleBytes.
	MaxBytes int64
	// CompileTimeout bounds compiling the module. Optional. Default is 60 s.
	CompileTimeout time.Duration
	// CompileMemoryBytes bounds the memory of the process that compiles the module and
	// asks it for its info. Optional. Default is 1 GiB.
	CompileMemoryBytes int64
	// Limits are the limits the module's manifest declares; a field above Ceilings is
	// refused. The module's first instance, its start and its info run under them, as
	// an Engine with default Options would run it: zero fields take DefaultLimits,
	// lowered to Ceilings. Optional.
	Limits host.Limits
	// CacheDir is the compilation cache the child fills, so that an Engine with the same
	// CacheDir loads the accepted module without compiling it again. Optional. Default is
	// the Engine's default (os.UserCacheDir()/scorekit/wazero); "-" for none.
	CacheDir string
	// MaxTableEntries bounds the module's tables as Options.MaxTableEntries does; set
	// both alike. Optional. Default is DefaultMaxTableEntries.
	MaxTableEntries int
}

// vetEnv carries a vetRequest to the child process Vet starts; VetChild, called first in
// the program's main, sees it and runs the child's part instead of the program.
const vetEnv = "SCOREKIT_WASM_VET"

// vetPath stands for the module in the messages of the child, which never sees a path.
const vetPath = "the module"

// Vet checks an uploaded module before it is accepted: its size, that it is a WebAssembly
// module, that the declared limits are within the ceilings, and then, in a child process
// bounded in time (CompileTimeout) and memory (CompileMemoryBytes), everything loading
// does: the host's instrumentation, compilation, the imports and exports of ABI v1, a
// first instance whose start and info are answered within the limits, and the infos'
// ABI versions. It returns the module's scorers. A refusal wraps ErrRefused.
//
// The child is this program again (os.Executable), started with vetEnv set; [VetChild],
// which the program calls first in its main (the scorekit binary's cli.Main, a test
// binary's TestMain), recognises it, runs only the vetting and reports on stdout. The
// module is compiled by the same code, at the same version, as the Engine that will run
// it. wazero's compiler takes no deadline or memory cap, so a process the host can kill
// is the only bound on both. A program that calls Vet without calling VetChild gets an
// error that says so.
func Vet(ctx context.Context, bin []byte, o VetOptions) ([]sdk.Info, error) {
	u, err := CheckUpload(bin, o)
	if err != nil {
		return nil, err
	}
	return u.Vet(ctx)
}

// Upload is a module that passed [CheckUpload]'s checks, to be vetted ([Upload.Vet]),
// which does not make them again.
type Upload struct {
	bin []byte
	o   VetOptions // defaults filled in, CacheDir aside (cacheDir)
}

// CheckUpload makes Vet's checks that start no process and read nothing but the bytes'
// first eight and their length: the size, that they are a core WebAssembly module, and the
// limits within the ceilings. A caller that bounds how many checks run at once (each one a
// child compiling) refuses with it what needs no child before it waits for a turn, and
// vets the Upload it returns in its turn. A refusal wraps ErrRefused.
func CheckUpload(bin []byte, o VetOptions) (Upload, error) {
	o = o.withDefaults()
	if err := checkUpload(bin, o); err != nil {
		return Upload{}, err
	}
	return Upload{bin: bin, o: o}, nil
}

// WithCacheDir returns the upload to be vetted into the compilation cache dir, as
// VetOptions.CacheDir says: for a caller that makes the folder once the module's turn
// comes.
func (u Upload) WithCacheDir(dir string) Upload {
	u.o.CacheDir = dir
	return u
}

// Vet makes the checks of [Vet] that need a process (compilation and the first instance,
// in a child), on a module CheckUpload accepted, and returns its scorers.
func (u Upload) Vet(ctx context.Context) ([]sdk.Info, error) {
	if u.bin == nil {
		return nil, errors.New("vet module: an Upload comes from CheckUpload")
	}
	o := u.o
	// What an Engine with default Options gives the module: DefaultLimits where the
	// manifest sets nothing, within the ceilings.
	lim := merge(o.Limits, DefaultLimits().Lower(o.Ceilings))
	req := vetRequest{Limits: lim, MaxTableEntries: o.MaxTableEntries, CacheDir: cacheDir(o.CacheDir), MemoryBytes: o.CompileMemoryBytes}
	limiter, err := newVetLimiter(req.MemoryBytes)
	if err != nil {
		return nil, fmt.Errorf("vet module: %w", err)
	}
	defer limiter.close()
	return runVetChild(ctx, u.bin, req, o.CompileTimeout, limiter)
}

func checkUpload(bin []byte, o VetOptions) error {
	if int64(len(bin)) > o.MaxBytes {
		return refuse(fmt.Errorf("%w: %d bytes, over the limit of %d; shrink it (Go: -ldflags='-s -w'; others: wasm-opt --strip-debug) or ask the operator to raise the limit",
			ErrUploadTooLarge, len(bin), o.MaxBytes))
	}
	if err := checkMagic(bin); err != nil {
		return refuse(err)
	}
	if _, err := o.Limits.Within(o.Ceilings); err != nil {
		return refuse(fmt.Errorf("%w; these are the tenant's ceilings", err))
	}
	return nil
}

// ReadModule reads an uploaded module from r, at most maxBytes of it (0:
// DefaultMaxModuleBytes): an upload over the cap is refused (ErrUploadTooLarge, wrapped
// with ErrRefused) after reading one byte past it, not the whole upload.
func ReadModule(r io.Reader, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxModuleBytes
	}
	bin, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read module: %w", err)
	}
	if int64(len(bin)) > maxBytes {
		return nil, refuse(fmt.Errorf("%w: over the limit of %d bytes; shrink it (Go: -ldflags='-s -w'; others: wasm-opt --strip-debug) or ask the operator to raise the limit",
			ErrUploadTooLarge, maxBytes))
	}
	return bin, nil
}

func (o VetOptions) withDefaults() VetOptions {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxModuleBytes
	}
	if o.CompileTimeout <= 0 {
		o.CompileTimeout = time.Minute
	}
	if o.CompileMemoryBytes <= 0 {
		o.CompileMemoryBytes = 1 << 30
	}
	if o.MaxTableEntries <= 0 {
		o.MaxTableEntries = DefaultMaxTableEntries
	}
	o.Ceilings = merge(o.Ceilings, DefaultCeilings())
	return o
}

// cacheDir is the compilation cache VetOptions.CacheDir names: "" when none.
func cacheDir(dir string) string {
	switch dir {
	case "-":
		return ""
	case "":
		dir, _ = defaultCacheDir() // none when the user has no cache folder
	}
	return dir
}

func refuse(err error) error { return fmt.Errorf("%w: %w", ErrRefused, err) }

// checkMagic refuses what is not a core WebAssembly module, before a process is started.
func checkMagic(bin []byte) error {
	switch {
	case len(bin) < 8 || !bytes.Equal(bin[:4], []byte("\x00asm")):
		return errors.New("not a WebAssembly module (it does not start with \\0asm); upload the .wasm file the build wrote (GOOS=wasip1 GOARCH=wasm, or a wasm32-wasi target)")
	case bytes.Equal(bin[4:8], []byte{1, 0, 0, 0}):
		return nil
	case bin[6] != 0 || bin[7] != 0:
		return errors.New("a WebAssembly component, not a core module; build a core module for wasm32-wasi / wasip1 (docs/ABI.md)")
	default:
		return fmt.Errorf("WebAssembly binary version %d; the host reads version 1 modules, which every current toolchain writes", bin[4])
	}
}

// vetRequest is what the child is asked to do (in vetEnv, as JSON).
type vetRequest struct {
	Limits          host.Limits `json:"limits"`
	MaxTableEntries int         `json:"max_table_entries"`
	CacheDir        string      `json:"cache_dir,omitempty"`
	MemoryBytes     int64       `json:"memory_bytes"`
	// RlimitAS: the child caps its own address space (no memory cgroup holds it).
	RlimitAS bool `json:"rlimit_as,omitempty"`
}

// vetReport is one line the child writes on stdout: "compiled" once compilation is done,
// then the result.
type vetReport struct {
	Phase string            `json:"phase,omitempty"`
	Infos []json.RawMessage `json:"infos,omitempty"`
	// Refused says what is wrong with the module.
	Refused string `json:"refused,omitempty"`
	// Failed says what went wrong on the host's side.
	Failed string `json:"failed,omitempty"`
}

const phaseCompiled = "compiled"

// runVetChild runs the vetting in a child process and reads its report. The child is
// killed when compilation outlasts compileTimeout, or when the probe that follows outlasts
// the time its own deadlines allow (they should stop it first).
func runVetChild(ctx context.Context, bin []byte, req vetRequest, compileTimeout time.Duration, limiter *vetLimiter) ([]sdk.Info, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("vet module: find this program to run the compiler in a child: %w", err)
	}
	req.RlimitAS = limiter.rlimitAS()
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{vetEnv + "=" + string(reqJSON)}
	cmd.Stdin = bytes.NewReader(bin)
	stderr := &cappedWriter{max: 16 << 10}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("vet module: %w", err)
	}
	vetSysProcAttr(cmd)
	if err := limiter.start(cmd); err != nil {
		return nil, fmt.Errorf("vet module: start the compiler's child process: %w", err)
	}
	reports := make(chan vetReport, 2)
	go readVetReports(out, int64(req.Limits.MaxResultBytes)*2+1<<20, reports)

	probeTimeout := 2*time.Duration(req.Limits.TimeoutMS)*time.Millisecond + 5*time.Second
	timer := time.NewTimer(compileTimeout)
	defer timer.Stop()
	compiled := false
	var final *vetReport
	var timedOut string
	var hostErr error
wait:
	for {
		select {
		case r, ok := <-reports:
			if !ok {
				break wait
			}
			if r.Phase == phaseCompiled {
				compiled = true
				if err := limiter.allowGuest(req.MemoryBytes, int64(req.Limits.MemoryMiB)<<20); err != nil {
					hostErr = fmt.Errorf("vet module: allow the probe its memory: %w", err)
					break wait
				}
				timer.Reset(probeTimeout)
				continue
			}
			final = &r
			break wait
		case <-timer.C:
			if compiled {
				timedOut = fmt.Sprintf("its start and info did not finish within %s; make them return sooner", probeTimeout)
			} else {
				timedOut = fmt.Sprintf("compiling it took longer than %s, the limit of compilation; make the module smaller (fewer or shorter functions) or ask the operator to raise the compile timeout", compileTimeout)
			}
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	limiter.kill(cmd)
	_ = cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("vet module: %w", ctx.Err())
	case hostErr != nil:
		return nil, hostErr
	case timedOut != "":
		return nil, refuse(errors.New(timedOut))
	case final != nil && final.Refused != "":
		return nil, refuse(errors.New(final.Refused))
	case final != nil && final.Failed != "":
		return nil, fmt.Errorf("vet module: %s", final.Failed)
	case final != nil:
		return decodeVetInfos(final.Infos)
	}
	// The child died without a report: the memory limit, or a crash.
	kept, _ := stderr.take()
	if limiter.outOfMemory() || outOfMemory(kept) {
		what := "compiling it"
		if compiled {
			what = "running its start and info"
		}
		return nil, refuse(fmt.Errorf("%s needed more than %d MiB of memory, the limit of compilation; make the module smaller (fewer or shorter functions) or ask the operator to raise the compile memory limit",
			what, req.MemoryBytes>>20))
	}
	return nil, fmt.Errorf("vet module: the compiler's child process ended without a report (%s; a program that vets modules calls wasm.VetChild first in its main): %s", cmd.ProcessState, strings.TrimSpace(kept))
}

// outOfMemory reports whether the child's stderr says that it could not map more memory:
// the Go runtime's "out of memory", an mmap's ENOMEM, or, in a binary built with the race
// detector (whose heap lives at fixed addresses), its address-space collisions.
func outOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "address space collisions"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// readVetReports decodes the child's report lines, reading at most max bytes.
func readVetReports(r io.Reader, max int64, out chan<- vetReport) {
	defer close(out)
	sc := bufio.NewScanner(io.LimitReader(r, max))
	sc.Buffer(nil, int(max))
	for sc.Scan() {
		var rep vetReport
		if json.Unmarshal(sc.Bytes(), &rep) != nil {
			return
		}
		out <- rep
		if rep.Phase == "" {
			break
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// decodeVetInfos checks the child's infos again: the child handled hostile input.
func decodeVetInfos(raws []json.RawMessage) ([]sdk.Info, error) {
	infos := make([]sdk.Info, len(raws))
	for i, raw := range raws {
		var err error
		if infos[i], err = host.DecodeInfo(raw); err != nil {
			return nil, refuse(fmt.Errorf("info[%d]: %w", i, err))
		}
	}
	if err := checkInfos(infos); err != nil {
		return nil, refuse(err)
	}
	return infos, nil
}

// VetChild runs the part of [Vet]'s child process when this program was started as one,
// and returns the status to exit with and true; otherwise it returns 0 and false at once.
// A program whose code may call Vet (one that serves the evaluation service, which vets
// the modules tenants publish) calls it first in main, before anything else reads stdin
// or writes stdout:
//
//	func main() {
//		if code, ok := wasm.VetChild(); ok {
//			os.Exit(code)
//		}
//		...
//	}
//
// The scorekit command line's cli.Main does; so does the TestMain of every test binary
// whose tests vet modules. Vet re-runs the program rather than a subcommand so that any
// program linking this package can vet, with the compiler it will run the module with.
func VetChild() (code int, ok bool) {
	req, ok := os.LookupEnv(vetEnv)
	if !ok {
		return 0, false
	}
	return vetChild(req, os.Stdin, os.Stdout), true
}

// vetChild is the child's part: read the module on stdin, compile and probe it under
// req's limits, report on stdout. It returns the exit code.
func vetChild(reqJSON string, stdin io.Reader, stdout io.Writer) int {
	enc := json.NewEncoder(stdout)
	var req vetRequest
	if err := json.Unmarshal([]byte(reqJSON), &req); err != nil {
		_ = enc.Encode(vetReport{Failed: "the child could not read its request: " + err.Error()})
		return 1
	}
	if err := limitSelf(req); err != nil {
		_ = enc.Encode(vetReport{Failed: err.Error()})
		return 1
	}
	bin, err := io.ReadAll(stdin)
	if err != nil {
		_ = enc.Encode(vetReport{Failed: "read the module: " + err.Error()})
		return 1
	}
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(false). // as Engine.Load: the added checks stop guests
		WithMemoryLimitPages(uint32(req.Limits.MemoryMiB) * 16)
	if req.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(req.CacheDir)
		if err != nil {
			_ = enc.Encode(vetReport{Failed: fmt.Sprintf("compilation cache %s: %v; set the cache folder to a writable one", req.CacheDir, err)})
			return 1
		}
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	defer rt.Close(ctx)
	a := &artifact{
		name:            vetPath,
		path:            vetPath,
		limits:          req.Limits,
		rt:              rt,
		log:             slog.New(slog.DiscardHandler),
		loadTimeout:     time.Duration(req.Limits.TimeoutMS) * time.Millisecond,
		maxTableEntries: req.MaxTableEntries,
	}
	if err := a.compile(ctx, bin); err != nil {
		_ = enc.Encode(vetReport{Refused: err.Error()})
		return 0
	}
	_ = enc.Encode(vetReport{Phase: phaseCompiled})
	if err := allowGuestMemory(req); err != nil {
		_ = enc.Encode(vetReport{Failed: err.Error()})
		return 1
	}
	if err := a.probe(ctx); err != nil {
		_ = enc.Encode(vetReport{Refused: err.Error()})
		return 0
	}
	rep := vetReport{Infos: make([]json.RawMessage, len(a.infos))}
	for i, in := range a.infos {
		if rep.Infos[i], err = json.Marshal(in); err != nil {
			_ = enc.Encode(vetReport{Failed: err.Error()})
			return 1
		}
	}
	_ = enc.Encode(rep)
	return 0
}
