package process

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scorekit/scorekit/host"
)

// Confinement says how far the host confines a process plugin. Every mode starts the plugin
// with an empty environment (plus its manifest's env), in a process group of its own that
// is killed as a group, with a death signal tied to the host, and under rlimits; the modes
// differ in the walls around it.
type Confinement string

const (
	// ConfineAuto runs plugins in a bubblewrap sandbox when bubblewrap works on this
	// machine, and with limits only otherwise, saying so at load (a warning) and in
	// Sandbox(). The default.
	ConfineAuto Confinement = ""
	// ConfineRequired fails Load when bubblewrap cannot confine the plugin here.
	ConfineRequired Confinement = "required"
	// ConfineLimitsOnly never uses bubblewrap: no network or filesystem walls.
	ConfineLimitsOnly Confinement = "limits-only"
)

// Sandbox describes how one artifact's processes are confined, as `scorekit scorers` shows
// it.
type Sandbox struct {
	// Confined is true when the plugin runs in a bubblewrap sandbox: no network, a
	// read-only view of its artifact's folder and the system's libraries, a private /tmp,
	// a pid namespace that dies with it.
	Confined bool `json:"confined"`
	// Mode names the mechanism: "bubblewrap (user namespace)", "bubblewrap (root, no user
	// namespace)" or "limits only".
	Mode string `json:"mode"`
	// Degraded says what does not hold and why, when the plugin runs with less than the
	// full sandbox. Empty when nothing is missing.
	Degraded string `json:"degraded,omitempty"`
}

// String is the one-line form of s.
func (s Sandbox) String() string {
	if s.Degraded == "" {
		return s.Mode
	}
	return s.Mode + " (DEGRADED: " + s.Degraded + ")"
}

// sandboxTmpBytes is the size of the private /tmp a confined plugin gets (tmpfs in memory).
const sandboxTmpBytes = 64 << 20

// fileSizeBytes caps every file a plugin writes (RLIMIT_FSIZE): its private /tmp, or, when
// not confined, anywhere the host's user may write.
const fileSizeBytes = 16 << 20

// sandboxUID is the user a confined plugin sees itself as, in its user namespace.
const sandboxUID = "65534"

// bwrapTier is one way of starting bubblewrap, from the strongest to the weakest.
type bwrapTier struct {
	mode string
	args []string
}

var bwrapTiers = []bwrapTier{
	{"bubblewrap (user namespace)", []string{"--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID, "--disable-userns"}},
	{"bubblewrap (user namespace)", []string{"--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID}},
	// Root without user namespaces (a container that forbids them): mount, pid and network
	// namespaces still work, and the plugin keeps no capability.
	{"bubblewrap (root, no user namespace)", nil},
}

// confinement is what the host found out about this machine once: which bubblewrap tier
// works and where prlimit is.
type confinement struct {
	bwrap   string // path, "" when not used
	tier    bwrapTier
	prlimit string // path, "" when missing
	why     string // why bubblewrap is not used, when it is not
}

var probes sync.Map // probeKey -> func() confinement (sync.OnceValue)

type probeKey struct {
	mode  Confinement
	bwrap string
}

// probeConfinement tries bubblewrap's tiers on `true` once per process, mode and
// bubblewrap executable ("" looks "bwrap" up in PATH).
func probeConfinement(mode Confinement, bwrap string) confinement {
	f, _ := probes.LoadOrStore(probeKey{mode, bwrap}, sync.OnceValue(func() confinement { return probeMachine(mode, bwrap) }))
	return f.(func() confinement)()
}

func probeMachine(mode Confinement, bwrap string) confinement {
	var c confinement
	c.prlimit, _ = exec.LookPath("prlimit")
	if mode == ConfineLimitsOnly {
		c.why = "bubblewrap turned off (process.Options.Confine is limits-only)"
		return c
	}
	if bwrap == "" {
		bwrap = "bwrap"
	}
	bwrap, err := exec.LookPath(bwrap)
	if err != nil {
		c.why = fmt.Sprintf("bubblewrap is not installed (%v; apt-get install bubblewrap)", err)
		return c
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		c.why = "no `true` command to test bubblewrap with"
		return c
	}
	var errs []string
	for _, t := range bwrapTiers {
		if t.args == nil && os.Geteuid() != 0 {
			continue
		}
		args := append(slices.Clone(t.args), baseBwrapArgs()...)
		args = append(args, "--", truePath)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := exec.CommandContext(ctx, bwrap, args...).CombinedOutput()
		cancel()
		if err == nil {
			c.bwrap, c.tier = bwrap, t
			return c
		}
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		if !slices.Contains(errs, msg) {
			errs = append(errs, msg)
		}
	}
	c.why = "bubblewrap cannot create namespaces here (" + strings.Join(errs, "; ") + ")"
	return c
}

// sandbox is what c means for a plugin, for people.
func (c confinement) sandbox() Sandbox {
	var missing []string
	s := Sandbox{Confined: c.bwrap != "", Mode: c.tier.mode}
	if !s.Confined {
		s.Mode = "limits only"
		missing = append(missing, "no network or filesystem walls: the plugin reaches the network and reads and writes what the host's user may, and a process it starts in a new session outlives it; "+c.why)
	}
	if c.prlimit == "" {
		missing = append(missing, "no memory, CPU or file-size rlimits: prlimit is not installed (apt-get install util-linux)")
	}
	s.Degraded = strings.Join(missing, "; ")
	return s
}

// baseBwrapArgs are the walls common to every tier: new namespaces but the user's, no
// capability, a read-only system, a private /tmp and /proc, and death with the host.
func baseBwrapArgs() []string {
	args := []string{
		"--die-with-parent", "--new-session",
		// The plugin is the pid namespace's first process (no bubblewrap init between it
		// and bubblewrap): when it dies, the kernel kills everything else in the
		// namespace, and bubblewrap reaps it itself, so its CPU time reaches the host's
		// accounts (which is how a call ended by limits.cpu_seconds is told apart).
		"--unshare-pid", "--as-pid-1", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
	}
	// Merged-/usr systems have /bin, /lib ... as symlinks into /usr; others have folders.
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	// What the dynamic loader and the time zone need; nothing else of /etc.
	for _, f := range []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives"} {
		args = append(args, "--ro-bind-try", f, f)
	}
	return append(args, "--proc", "/proc", "--dev", "/dev",
		"--size", strconv.Itoa(sandboxTmpBytes), "--tmpfs", "/tmp")
}

// launch is how one plugin process is started: the command line (prlimit, bubblewrap,
// then the plugin) and its environment.
type launch struct {
	path string
	args []string // argv without argv[0]
	env  []string
}

// command builds the launch of the artifact exe (its real path) under c, with lim's
// rlimits, reads made read-only visible, socketDir (go-plugin's folder of Unix sockets)
// writable, and env as the whole environment.
func (c confinement) command(exe string, args []string, reads []string, socketDir string, lim host.Limits, env []string) launch {
	argv := append([]string{exe}, args...)
	if c.bwrap != "" {
		dir := filepath.Dir(exe)
		b := append(slices.Clone(c.tier.args), baseBwrapArgs()...)
		for _, r := range reads {
			b = append(b, "--ro-bind", r, r)
		}
		b = append(b, "--ro-bind", dir, dir, "--bind", socketDir, socketDir, "--chdir", dir, "--")
		argv = append(append([]string{c.bwrap}, b...), argv...)
	}
	if c.prlimit != "" {
		p := []string{c.prlimit, "--core=0", "--fsize=" + strconv.Itoa(fileSizeBytes)}
		if lim.MemoryMiB > 0 {
			p = append(p, "--data="+strconv.FormatInt(int64(lim.MemoryMiB)<<20, 10))
		}
		if lim.CPUSeconds > 0 {
			// The soft limit sends SIGXCPU, the hard one a second later SIGKILL.
			p = append(p, fmt.Sprintf("--cpu=%d:%d", lim.CPUSeconds, lim.CPUSeconds+1))
		}
		argv = append(append(p, "--"), argv...)
	}
	return launch{path: argv[0], args: argv[1:], env: env}
}

// baseEnv is every plugin's environment before its manifest's: a search path and a
// private temporary folder, nothing of the host's.
var baseEnv = map[string]string{
	"PATH":   "/usr/local/bin:/usr/bin:/bin",
	"HOME":   "/tmp",
	"TMPDIR": "/tmp",
	"LANG":   "C.UTF-8",
}

// pluginEnv is the environment of a plugin: baseEnv, then the manifest's env, then
// go-plugin's own variables (the magic cookie, the protocol versions, the socket folder,
// the AutoMTLS certificate).
func pluginEnv(manifest map[string]string, goPlugin []string) []string {
	m := map[string]string{}
	for k, v := range baseEnv {
		m[k] = v
	}
	for k, v := range manifest {
		m[k] = v
	}
	out := make([]string, 0, len(m)+len(goPlugin))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return append(out, goPlugin...)
}

// checkEnv refuses a manifest env that would hand the plugin a credential or override
// go-plugin's variables.
func checkEnv(env map[string]string) error {
	for name := range env {
		switch {
		case name == "" || strings.ContainsAny(name, "=\x00"):
			return fmt.Errorf("env %q: not a variable name", name)
		case credentialName(name):
			return fmt.Errorf("env %s: a plugin never gets a credential; the host's judge answers its requests (declare the judge capability), so remove %s from the manifest", name, name)
		case strings.HasPrefix(name, "PLUGIN_") || name == "SCOREKIT_PLUGIN":
			return fmt.Errorf("env %s: the host sets go-plugin's variables itself; remove %s from the manifest", name, name)
		}
	}
	return nil
}

// credentialName reports whether an environment variable's name says it holds a secret
// (OPENAI_API_KEY, GITHUB_TOKEN, PGPASSWORD, AWS_SECRET_ACCESS_KEY ...).
func credentialName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY"} {
		if strings.Contains(up, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch part {
		case "KEY", "AUTH", "PASS", "COOKIE":
			return true
		}
	}
	return false
}

// readPaths resolves a manifest's read paths against its folder; each must exist.
func readPaths(m host.Manifest) ([]string, error) {
	out := make([]string, 0, len(m.Read))
	for _, r := range m.Read {
		p := r
		if !filepath.IsAbs(p) {
			p = filepath.Join(m.Dir, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			real, err = filepath.Abs(real)
		}
		if err != nil {
			return nil, fmt.Errorf("read %q: %w; list paths that exist, relative to the manifest's folder %s", r, err, m.Dir)
		}
		out = append(out, real)
	}
	return out, nil
}

// stderrSaysOOM reports whether a plugin's stderr says it ran out of memory: Go's runtime
// ("fatal error: runtime: out of memory"), V8 ("JavaScript heap out of memory"), glibc and
// most others say so in these words.
func stderrSaysOOM(b []byte) bool {
	return bytes.Contains(bytes.ToLower(b), []byte("out of memory"))
}
