package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ManifestSuffix is how a plugin manifest's file name ends: DIR/heuristic.plugin.json.
const ManifestSuffix = ".plugin.json"

// Manifest describes a loadable plugin: an artifact (a .wasm module or an executable), its
// pinned sha256, the runtime that loads it and the limits it runs under. One artifact may
// carry several scorers.
type Manifest struct {
	// Name of the plugin (not of its scorers).
	Name string `json:"name"`
	// Runtime is RuntimeWASM or RuntimeProcess.
	Runtime string `json:"runtime"`
	// Artifact is the module or executable, relative to the manifest's folder.
	Artifact string `json:"artifact"`
	// SHA256 pins the artifact (hex). Required: the host refuses an artifact that differs.
	SHA256 string `json:"sha256"`
	// Args are passed to a process plugin. Optional.
	Args []string `json:"args,omitempty"`
	// Env is what a process plugin finds in its environment besides what the host sets
	// (name -> value, taken literally). Optional. A plugin never inherits the host's
	// environment, and the host refuses names that carry credentials.
	Env map[string]string `json:"env,omitempty"`
	// Read lists the paths, relative to the manifest's folder, that a process plugin may
	// read besides its artifact's folder and the system's libraries. Optional.
	Read []string `json:"read,omitempty"`
	// Scorers, when set, must equal the names the artifact declares. Optional; when set,
	// a plugin that fails to load makes exactly these scorers unavailable.
	Scorers []string `json:"scorers,omitempty"`
	// Replaces lists the scorers the plugin may replace: a scorer the host already has
	// under that name (a built-in, or one loaded earlier). A plugin scorer that takes a
	// taken name without being listed here is refused. Optional. Default is none.
	Replaces []string `json:"replaces,omitempty"`
	// Limits the plugin runs under. Optional; zero fields take the runtime's defaults.
	Limits Limits `json:"limits"`

	// Dir is the manifest's folder; set by ReadManifest.
	Dir string `json:"-"`
}

// Limits bound what a plugin may use. Zero means the runtime's default.
type Limits struct {
	// MemoryMiB caps a WASM instance's linear memory, and a process plugin's data segment
	// (heap and other private writable memory; RLIMIT_DATA), per process.
	MemoryMiB int `json:"memory_mib,omitempty"`
	// TimeoutMS is the deadline of one call.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// MaxResultBytes caps the size of one result.
	MaxResultBytes int `json:"max_result_bytes,omitempty"`
	// MaxOutputBytes caps captured stdout plus stderr per call.
	MaxOutputBytes int `json:"max_output_bytes,omitempty"`
	// PoolSize caps live instances per (tenant, scorer).
	PoolSize int `json:"pool_size,omitempty"`
	// MaxCalls recycles an instance after this many calls.
	MaxCalls int `json:"max_calls,omitempty"`
	// CPUSeconds caps the CPU time of one plugin process, and of each process it starts,
	// over its life (process runtime; RLIMIT_CPU). The host recycles a process before it
	// reaches the cap; a process that reaches it mid-call is killed and the call fails with
	// limit_exceeded.
	CPUSeconds int `json:"cpu_seconds,omitempty"`
	// StackKiB caps the call stack of one call into a WASM guest, in KiB as the host
	// weighs its frames (docs/SANDBOX.md); a call past it fails with limit_exceeded.
	StackKiB int `json:"stack_kib,omitempty"`
}

// limitField is one field of Limits or RunLimits: its JSON name, its address and, for
// RunLimits, its default.
type limitField struct {
	name string
	v    *int
	def  int
}

// lowerFields lowers each of out's fields to t's where t's is positive and smaller, or
// out's is 0 (unset): Limits.Lower and RunLimits.Lower.
func lowerFields(out, t []limitField) {
	for i, f := range out {
		if v := *t[i].v; v > 0 && (*f.v == 0 || v < *f.v) {
			*f.v = v
		}
	}
}

// fields lists l's fields with their JSON names, for the functions below.
func (l *Limits) fields() [8]limitField {
	return [8]limitField{
		{name: "memory_mib", v: &l.MemoryMiB}, {name: "timeout_ms", v: &l.TimeoutMS}, {name: "max_result_bytes", v: &l.MaxResultBytes},
		{name: "max_output_bytes", v: &l.MaxOutputBytes}, {name: "pool_size", v: &l.PoolSize}, {name: "max_calls", v: &l.MaxCalls},
		{name: "cpu_seconds", v: &l.CPUSeconds}, {name: "stack_kib", v: &l.StackKiB},
	}
}

// Within returns l with every zero field taken from ceil, or an error wrapping
// [ErrOverCeiling] that names the first field where l asks for more than ceil allows. A
// zero field of ceil sets no ceiling. A manifest may ask for less than the host allows,
// never more.
func (l Limits) Within(ceil Limits) (Limits, error) {
	out := l
	of, cf := out.fields(), ceil.fields()
	for i, f := range of {
		c := *cf[i].v
		switch {
		case c == 0:
		case *f.v == 0:
			*f.v = c
		case *f.v > c:
			return l, fmt.Errorf("%w: limits.%s is %d, the host allows at most %d; ask for %d or less",
				ErrOverCeiling, f.name, *f.v, c, c)
		}
	}
	return out, nil
}

// Lower returns l with each field lowered to t's where t sets a smaller, non-zero value:
// a tenant's ceilings applied to what a plugin was loaded with.
func (l Limits) Lower(t Limits) Limits {
	out := l
	of, tf := out.fields(), t.fields()
	lowerFields(of[:], tf[:])
	return out
}

// ReadManifest reads and checks a manifest file. It does not read the artifact.
func ReadManifest(path string) (Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("read manifest %s: %w", path, err)
	}
	m.Dir = filepath.Dir(path)
	switch {
	case m.Name == "":
		return m, fmt.Errorf("read manifest %s: missing \"name\"", path)
	case m.Runtime != RuntimeWASM && m.Runtime != RuntimeProcess:
		return m, fmt.Errorf("read manifest %s: runtime %q: want %q or %q", path, m.Runtime, RuntimeWASM, RuntimeProcess)
	case m.Artifact == "":
		return m, fmt.Errorf("read manifest %s: missing \"artifact\"", path)
	case len(m.SHA256) != 64:
		return m, fmt.Errorf("read manifest %s: \"sha256\" must be 64 hex digits; compute it with: sha256sum %s", path, m.ArtifactPath())
	}
	return m, nil
}

// MayReplace reports whether the manifest opts in to replacing the scorer called name.
func (m *Manifest) MayReplace(name string) bool {
	for _, n := range m.Replaces {
		if n == name {
			return true
		}
	}
	return false
}

// ArtifactPath is the artifact's path on disk.
func (m *Manifest) ArtifactPath() string {
	if filepath.IsAbs(m.Artifact) {
		return m.Artifact
	}
	return filepath.Join(m.Dir, m.Artifact)
}

// ReadArtifact reads the artifact and checks its sha256 against the manifest.
func (m *Manifest) ReadArtifact() ([]byte, error) {
	b, err := os.ReadFile(m.ArtifactPath())
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", m.Name, err)
	}
	if err := m.checkSum(sha256.Sum256(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// VerifyArtifact checks the artifact's sha256 without keeping it in memory.
func (m *Manifest) VerifyArtifact() error {
	f, err := os.Open(m.ArtifactPath())
	if err != nil {
		return fmt.Errorf("plugin %s: %w", m.Name, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("plugin %s: %w", m.Name, err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return m.checkSum(sum)
}

func (m *Manifest) checkSum(sum [32]byte) error {
	if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, m.SHA256) {
		return fmt.Errorf("plugin %s: %w: manifest pins %s, %s is %s; rebuild the plugin or update the manifest",
			m.Name, ErrHashMismatch, m.SHA256, m.ArtifactPath(), got)
	}
	return nil
}

// manifestsIn returns the manifest files in dir, sorted.
func manifestsIn(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+ManifestSuffix))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("load plugins: no *%s in %s", ManifestSuffix, dir)
	}
	return paths, nil
}
