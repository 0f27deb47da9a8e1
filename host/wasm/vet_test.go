//go:build linux

// Vet runs on Linux only: it bounds the compiler's memory with cgroups or RLIMIT_AS.

package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/scorekit/scorekit/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/internal/cgroup"
	"github.com/scorekit/scorekit/sdk"
)

// vetFast are options that keep hostile probes short: a guest's info gets 500 ms.
var vetFast = VetOptions{Ceilings: host.Limits{TimeoutMS: 500}, CacheDir: "-"}

// TestVetRefuses: each hostile module is refused at publish with an error that names what
// is wrong and the fix, wraps ErrRefused, and names no host path.
func TestVetRefuses(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(watGuest(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		bin  []byte
		opts VetOptions
		// want are substrings of the error.
		want []string
	}{
		{name: "endless loop in info", bin: read("infoloop"), opts: vetFast,
			want: []string{"scorekit_v1_info", "deadline", "limits.timeout_ms"}},
		{name: "endless loop in start", bin: read("loopstart"), opts: vetFast,
			want: []string{"start function", "deadline"}},
		{name: "memory.grow bomb in info", bin: read("infogrow"), opts: VetOptions{Ceilings: host.Limits{MemoryMiB: 16, TimeoutMS: 2000}, CacheDir: "-"},
			want: []string{"memory limit of 16 MiB", "limits.memory_mib"}},
		{name: "trap in info", bin: read("infotrap"), opts: vetFast,
			want: []string{"scorekit_v1_info", "unreachable"}},
		{name: "huge info", bin: read("infohuge"), opts: vetFast,
			want: []string{"reply of 16777216 bytes exceeds the limit", "max_result_bytes"}},
		{name: "forbidden import", bin: read("forbidden"), opts: vetFast,
			want: []string{"forbidden import", "a plugin may import only"}},
		{name: "socket import", bin: read("socket"), opts: vetFast,
			want: []string{"forbidden import", "sock_"}},
		{name: "ABI v2 exports", bin: read("abiv2exports"), opts: vetFast,
			want: []string{"ABI v2", "rebuild"}},
		{name: "ABI v2 info", bin: read("abiv2info"), opts: vetFast,
			want: []string{"built for ABI v2", "rebuild"}},
		{name: "missing exports", bin: read("noscore"), opts: vetFast,
			want: []string{"missing export", "scorekit_v1_score"}},
		{name: "manifest asking 4 GiB", bin: read("ok"), opts: VetOptions{Limits: host.Limits{MemoryMiB: 4096}, CacheDir: "-"},
			want: []string{"limits.memory_mib is 4096", "at most 256", "ceilings"}},
		{name: "module starting with 4 GiB", bin: read("startbig"), opts: vetFast,
			want: []string{"starts with 4096 MiB", "limits.memory_mib"}},
		{name: "not wasm", bin: []byte("#!/bin/sh\necho this is a shell script\n"), opts: vetFast,
			want: []string{"not a WebAssembly module", ".wasm"}},
		{name: "empty", bin: nil, opts: vetFast,
			want: []string{"not a WebAssembly module"}},
		{name: "component", bin: []byte("\x00asm\x0d\x00\x01\x00"), opts: vetFast,
			want: []string{"component", "core module"}},
		{name: "truncated module", bin: read("ok")[:40], opts: vetFast,
			want: []string{"section 3: length 5 exceeds the 3 bytes left"}},
		{name: "200 MB upload", bin: make([]byte, 200<<20), opts: vetFast,
			want: []string{"209715200 bytes, over the limit of 33554432", "shrink it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infos, err := Vet(context.Background(), tt.bin, tt.opts)
			if err == nil {
				t.Fatalf("Vet accepted it: %+v", infos)
			}
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Vet: %v, want ErrRefused", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Vet: %v, want it to say %q", err, w)
				}
			}
			if wd, _ := os.Getwd(); strings.Contains(err.Error(), wd) || strings.Contains(err.Error(), testBuilds.dir) || strings.Contains(err.Error(), os.TempDir()) {
				t.Errorf("Vet: %v names a host path", err)
			}
		})
	}
}

// TestVetUploadTooLarge: an upload over MaxBytes is refused before a child starts, with
// ErrUploadTooLarge for the caller's 413.
func TestVetUploadTooLarge(t *testing.T) {
	_, err := Vet(context.Background(), make([]byte, 1025), VetOptions{MaxBytes: 1024})
	if !errors.Is(err, ErrUploadTooLarge) || !errors.Is(err, ErrRefused) {
		t.Fatalf("Vet: %v, want ErrUploadTooLarge", err)
	}
}

// zeros is an endless upload that counts what was read of it.
type zeros struct{ read int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

// TestReadModule: an upload over the cap is refused after one byte past it, however long
// it is; one within the cap is read whole.
func TestReadModule(t *testing.T) {
	z := &zeros{}
	_, err := ReadModule(z, 1<<20)
	if !errors.Is(err, ErrUploadTooLarge) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
		t.Fatalf("ReadModule: %v, want ErrUploadTooLarge naming the limit", err)
	}
	if z.read != 1<<20+1 {
		t.Fatalf("ReadModule read %d bytes of an endless upload, want the cap + 1", z.read)
	}
	bin, err := ReadModule(bytes.NewReader(make([]byte, 1<<20)), 1<<20)
	if err != nil || len(bin) != 1<<20 {
		t.Fatalf("ReadModule at the cap: %d bytes, %v", len(bin), err)
	}
}

// TestVetAccepts: a sound module passes, with its scorers, within the ceilings; a Go guest
// too (the heaviest real compile).
func TestVetAccepts(t *testing.T) {
	for _, tt := range []struct{ name, path, scorer string }{
		{"wat", watGuest(t, "ok"), "ok"},
		{"go guest", goGuest(t, "goguest", "./testdata/goguest"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			// A generous compile timeout: this is about what is accepted, and a child
			// built with -race on a busy machine compiles a Go guest slowly.
			infos, err := Vet(context.Background(), bin, VetOptions{CacheDir: "-", CompileTimeout: 10 * time.Minute})
			if err != nil {
				t.Fatalf("Vet: %v", err)
			}
			if len(infos) == 0 || tt.scorer != "" && infos[0].Name != tt.scorer {
				t.Fatalf("Vet: %+v, want scorer %q", infos, tt.scorer)
			}
		})
	}
}

// heavyModule is a valid module of n functions that takes wazero long and much memory to
// compile: each function is a chain of body multiply-adds of its parameter, which the
// compiler builds into one graph (1 x 200,000 takes ~1.2 MB on disk, ~300 MB and seconds
// to compile).
func heavyModule(n, body int) []byte {
	var b bytes.Buffer
	b.WriteString("\x00asm\x01\x00\x00\x00")
	section := func(id byte, payload []byte) {
		b.WriteByte(id)
		b.Write(appendULEB(nil, uint64(len(payload))))
		b.Write(payload)
	}
	section(1, []byte{1, 0x60, 1, 0x7f, 1, 0x7f}) // one type: (i32) -> i32
	funcs := appendULEB(nil, uint64(n))
	for range n {
		funcs = append(funcs, 0)
	}
	section(3, funcs)
	fn := []byte{0, 0x20, 0} // no locals; local.get 0
	for range body {
		fn = append(fn, 0x20, 0, 0x6c, 0x20, 0, 0x6a) // local.get 0; i32.mul; local.get 0; i32.add
	}
	fn = append(fn, 0x0b)
	code := appendULEB(nil, uint64(n))
	for range n {
		code = appendULEB(code, uint64(len(fn)))
		code = append(code, fn...)
	}
	section(10, code)
	return b.Bytes()
}

// TestVetBoundsCompilation: a module that takes long or much memory to compile is killed
// in its child by the timer or the memory limit; the refusal names the limit, the host's
// own peak memory does not grow by what compiling takes (~300 MB), and it goes on
// vetting.
func TestVetBoundsCompilation(t *testing.T) {
	heavy := heavyModule(1, 200_000)
	tests := []struct {
		name string
		opts VetOptions
		want []string
	}{
		{name: "compile timeout", opts: VetOptions{MaxBytes: 1 << 30, CompileTimeout: 300 * time.Millisecond, CacheDir: "-"},
			want: []string{"compiling it took longer than 300ms", "compile timeout"}},
		{name: "compile memory", opts: VetOptions{MaxBytes: 1 << 30, CompileTimeout: 10 * time.Minute, CompileMemoryBytes: 96 << 20, CacheDir: "-"},
			want: []string{"needed more than 96 MiB of memory", "compile memory limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				t.Fatalf("reset the peak RSS: %v", err)
			}
			base := testkit.ProcStatus(t, "VmRSS")
			_, err := Vet(context.Background(), heavy, tt.opts)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Vet: %v, want ErrRefused", err)
			}
			if grew := (testkit.ProcStatus(t, "VmHWM") - base) >> 10; grew > 64 {
				t.Errorf("the host's peak RSS grew by %d MiB while the child compiled; the compile ran in the host?", grew)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Vet: %v, want it to say %q", err, w)
				}
			}
			bin, err := os.ReadFile(watGuest(t, "ok"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Vet(context.Background(), bin, VetOptions{CacheDir: "-"}); err != nil {
				t.Fatalf("Vet after the refusal: %v", err)
			}
		})
	}
}

// TestVetFillsCache: the child compiles into the compilation cache, under the key an
// Engine with the same folder looks up, so the first load after publishing is warm.
func TestVetFillsCache(t *testing.T) {
	dir := t.TempDir()
	bin, err := os.ReadFile(watGuest(t, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Vet(context.Background(), bin, VetOptions{CacheDir: dir}); err != nil {
		t.Fatal(err)
	}
	entries := cacheEntries(t, dir)
	if len(entries) != 1 {
		t.Fatalf("after Vet the cache holds %v, want one compiled module", entries)
	}
	e := newEngineWith(t, Options{CacheDir: dir})
	if _, err := e.Load(context.Background(), manifestFor(t, watGuest(t, "ok"), host.Limits{})); err != nil {
		t.Fatal(err)
	}
	if after := cacheEntries(t, dir); len(after) != 1 || after[0] != entries[0] {
		t.Fatalf("after Load the cache holds %v, want Vet's %v alone (the same key)", after, entries)
	}
}

// cacheEntries lists the compiled modules in a wazero cache folder.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, filepath.Base(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVetMemoryLimiters: each way of bounding the child's memory lets a small module
// through and stops the heavy compile by itself: the memory cgroup (the kernel kills the
// child at the limit) where the host can make one, and RLIMIT_AS (the child's runtime
// fails to map more).
func TestVetMemoryLimiters(t *testing.T) {
	heavy := heavyModule(1, 200_000)
	ok, err := os.ReadFile(watGuest(t, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	req := vetRequest{Limits: DefaultLimits(), MaxTableEntries: DefaultMaxTableEntries, MemoryBytes: 96 << 20}
	// run vets bin with a limiter of its own (a limiter serves one child).
	run := func(t *testing.T, bin []byte, rlimit bool) (*vetLimiter, error) {
		t.Helper()
		l := &vetLimiter{}
		if !rlimit {
			var err error
			if l, err = newVetLimiter(req.MemoryBytes); err != nil {
				t.Fatal(err)
			}
			if l.rlimitAS() {
				t.Fatal("the limiter chose RLIMIT_AS although a memory cgroup is there")
			}
		}
		t.Cleanup(l.close)
		_, err := runVetChild(context.Background(), bin, req, 10*time.Minute, l)
		return l, err
	}
	if got, cg := VetMemoryBound(), cgroup.Find().MemoryVersion(); cg != "" && !strings.Contains(got, cg) || cg == "" && !strings.Contains(got, "RLIMIT_AS") {
		t.Errorf("VetMemoryBound: %q, with a memory cgroup %q", got, cg)
	}
	for _, rlimit := range []bool{true, false} {
		name := map[bool]string{true: "rlimit_as", false: "cgroup"}[rlimit]
		t.Run(name, func(t *testing.T) {
			if why := cgroup.Find().Why(); !rlimit && cgroup.Find().MemoryVersion() == "" {
				t.Skipf("no memory cgroup on this machine: %s", why)
			}
			if _, err := run(t, ok, rlimit); err != nil {
				t.Fatalf("Vet of a small module: %v", err)
			}
			l, err := run(t, heavy, rlimit)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "compiling it needed more than 96 MiB") {
				t.Fatalf("Vet: %v, want the memory refusal", err)
			}
			if !rlimit && l.cg.OOMKills() == 0 {
				t.Fatal("the child was not killed by its memory cgroup")
			}
		})
	}
}

// TestVetBesideScoring: hostile modules vetted while another tenant scores: the
// compile bomb and the endless info are refused, and every one of the other tenant's
// calls, made meanwhile in the same host, succeeds.
func TestVetBesideScoring(t *testing.T) {
	e := newEngine(t, nil)
	b := open(t, e, watGuest(t, "ok"), host.Limits{}, "ok", "bystander")
	loop, err := os.ReadFile(watGuest(t, "infoloop"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := []struct {
		name string
		bin  []byte
		opts VetOptions
	}{
		{"compile bomb", heavyModule(1, 200_000), VetOptions{CompileMemoryBytes: 96 << 20, CacheDir: "-"}},
		{"endless info", loop, vetFast},
	}
	done := make(chan error, len(hostile))
	for _, h := range hostile {
		go func() {
			_, err := Vet(context.Background(), h.bin, h.opts)
			if !errors.Is(err, ErrRefused) {
				err = fmt.Errorf("%s: %v, want ErrRefused", h.name, err)
			} else {
				err = nil
			}
			done <- err
		}()
	}
	calls := 0
	for pending := len(hostile); pending > 0; {
		select {
		case err := <-done:
			pending--
			if err != nil {
				t.Error(err)
			}
		default:
			if res, err := b.Score(context.Background(), &sdk.Run{Output: "x"}, nil); err != nil || res.Score == nil || *res.Score != 1 {
				t.Fatalf("the bystander's call %d: %+v, %v", calls, res, err)
			}
			calls++
		}
	}
	if calls == 0 {
		t.Fatal("the bystander made no call while the hostile modules were vetted")
	}
}

// TestVetChild: the hook does nothing in a program that is not Vet's child, and in one that
// is, runs the child's part and hands its status back to the program instead of exiting.
func TestVetChild(t *testing.T) {
	t.Setenv(vetEnv, "")
	os.Unsetenv(vetEnv)
	if code, ok := VetChild(); ok || code != 0 {
		t.Fatalf("VetChild() outside the child = %d, %v; want 0, false", code, ok)
	}

	t.Setenv(vetEnv, "not a request")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	code, ok := VetChild()
	os.Stdout = stdout
	w.Close()
	var out bytes.Buffer
	if _, err := out.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	if !ok || code != 1 || !strings.Contains(out.String(), "could not read its request") {
		t.Fatalf("VetChild() in a child with a bad request = %d, %v, stdout %q; want 1, true and a failed report", code, ok, out.String())
	}
}
