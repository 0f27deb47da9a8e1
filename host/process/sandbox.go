package process

import (
	"bytes"
	"context"
	"errors"
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

	"github.com/hashicorp/go-plugin"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/internal/cgroup"
)

// Confinement says how far the host confines a process plugin. Every mode starts the plugin
// with an empty environment (plus its manifest's env), in a process group of its own that
// is killed as a group, with a death signal tied to the host, under rlimits, and in a
// cgroup of its own where the machine offers one; the modes differ in the walls around it.
type Confinement string

const (
	// ConfineAuto runs plugins in a bubblewrap sandbox when bubblewrap works on this
	// machine, and with limits only otherwise, saying so at load (a warning) and in
	// Sandbox(). The default.
	ConfineAuto Confinement = ""
	// ConfineRequired fails Load (ErrNotConfined, naming what is missing) unless every
	// wall and cap holds here: bubblewrap, the memory and pids cgroup controllers and
	// prlimit. What `scorekit serve --require-sandbox` sets.
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
	// Mode names the mechanism: "bubblewrap (uid 65534, no user namespaces)",
	// "bubblewrap (user namespace, uid 65534)", "limits only" ...
	Mode string `json:"mode"`
	// User is who the plugin runs as, on the host: never root when confined.
	User string `json:"user"`
	// Cgroups says what the cgroup controllers cap for each plugin process with all it
	// starts ("memory 512 MiB (cgroup v1), 256 processes and threads, 4096 for all
	// plugins (cgroup v1 pids)"); empty when no controller binds.
	Cgroups string `json:"cgroups,omitempty"`
	// Degraded says what does not hold and why, when the plugin runs with less than the
	// full sandbox. Empty when nothing is missing.
	Degraded string `json:"degraded,omitempty"`
}

// String is the one-line form of s.
func (s Sandbox) String() string {
	out := s.Mode + ", as " + s.User
	if s.Cgroups != "" {
		out += "; its process tree capped at " + s.Cgroups
	}
	if s.Degraded != "" {
		out += " (DEGRADED: " + s.Degraded + ")"
	}
	return out
}

// sandboxTmpBytes is the size of the private /tmp a confined plugin gets (tmpfs in memory).
const sandboxTmpBytes = 64 << 20

// socketDirBytes is the size of the folder a confined plugin makes its Unix sockets in (a
// tmpfs inside the sandbox, PLUGIN_UNIX_SOCKET_DIR): a socket takes no space, so this only
// bounds what else a plugin writes there.
const socketDirBytes = 64 << 10

// sandboxSocketDir is where a confined plugin makes its sockets; the host reaches them
// through /proc/PID/root.
const sandboxSocketDir = "/run/scorekit-plugin"

// fileSizeBytes caps every file a plugin writes (RLIMIT_FSIZE): its private /tmp, or, when
// not confined, anywhere the host's user may write.
const fileSizeBytes = 16 << 20

// sandboxUID is the user (and group) a confined plugin runs as: nobody. A host running as
// root starts it as that user on the host; any other host maps it to the host's own user.
const sandboxUID = 65534

// bwrapTier is one way of starting bubblewrap, from the strongest to the weakest.
type bwrapTier struct {
	mode string
	// args come before the walls every tier shares.
	args []string
	// root: the host is root. bubblewrap runs as root without a user namespace, so it can
	// show the plugin any folder the host chose, then setpriv drops the plugin to
	// sandboxUID with no capability: a user namespace made by root would map the
	// plugin's user to root, and root owns /etc/shadow.
	root bool
	// inner: inside, an unprivileged bubblewrap adds a user namespace that can make no
	// further one (--disable-userns), so the plugin cannot reach the kernel's user
	// namespace code either.
	inner bool
	// lacks is what this tier does not do that the first one does.
	lacks string
}

var uid = strconv.Itoa(sandboxUID)

var rootTiers = []bwrapTier{
	{mode: "bubblewrap (uid 65534, no user namespaces)", root: true, inner: true},
	{mode: "bubblewrap (uid 65534)", root: true,
		lacks: "the plugin may create user namespaces (an unprivileged bubblewrap could not run inside the sandbox to forbid them)"},
}

var userTiers = []bwrapTier{
	{mode: "bubblewrap (user namespace, uid 65534)", args: []string{"--unshare-user", "--uid", uid, "--gid", uid, "--disable-userns"}},
	{mode: "bubblewrap (user namespace, uid 65534)", args: []string{"--unshare-user", "--uid", uid, "--gid", uid},
		lacks: "the plugin may create further user namespaces (this bubblewrap cannot forbid them)"},
}

// confinement is what the host found out about this machine once: which bubblewrap tier
// works, where prlimit and setpriv are, which cgroup controllers bind.
type confinement struct {
	bwrap   string // path, "" when not used
	tier    bwrapTier
	prlimit string       // path, "" when missing
	setpriv string       // path; used by the root tiers
	why     string       // why bubblewrap is not used, when it is not
	cg      *cgroup.Host // nil when turned off
	cgWhy   string       // why the cgroup caps do not hold, when they do not
}

var probes sync.Map // probeKey -> func() confinement (sync.OnceValue)

type probeKey struct {
	mode   Confinement
	bwrap  string
	path   string // $PATH, where the tools are looked up
	noCgrp bool
}

// probeConfinement tries bubblewrap's tiers on `true` once per process, mode, bubblewrap
// executable ("" looks "bwrap" up in PATH) and PATH, and finds the cgroup controllers.
func probeConfinement(mode Confinement, bwrap string, noCgroups bool) confinement {
	k := probeKey{mode, bwrap, os.Getenv("PATH"), noCgroups}
	f, _ := probes.LoadOrStore(k, sync.OnceValue(func() confinement { return probeMachine(mode, bwrap, noCgroups) }))
	return f.(func() confinement)()
}

func probeMachine(mode Confinement, bwrap string, noCgroups bool) confinement {
	var c confinement
	c.prlimit, _ = exec.LookPath("prlimit")
	c.setpriv, _ = exec.LookPath("setpriv")
	if noCgroups {
		c.cgWhy = "cgroups turned off (process.Options.NoCgroups)"
	} else if cg := cgroup.Find(); cg.Why() != "" {
		c.cgWhy = cg.Why()
		if cg.Usable() {
			c.cg = cg
		}
	} else {
		c.cg = cg
	}
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
	tiers := userTiers
	if os.Geteuid() == 0 {
		if c.setpriv == "" {
			c.why = "the host runs as root and setpriv is not installed to drop the plugin to an unprivileged user (apt-get install util-linux)"
			return c
		}
		tiers = rootTiers
	}
	dir, err := os.MkdirTemp("", "scorekit-probe")
	if err != nil {
		c.why = "cannot make a folder to test bubblewrap with: " + err.Error()
		return c
	}
	defer os.RemoveAll(dir)
	var errs []string
	for _, t := range tiers {
		try := confinement{bwrap: bwrap, tier: t, setpriv: c.setpriv}
		l := try.command(truePath, nil, nil, dir, host.Limits{}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := exec.CommandContext(ctx, l.path, l.args...).CombinedOutput()
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

// sandbox is what c means for a plugin whose tree may hold memMiB of memory and maxTasks
// processes and threads (total for all plugins), for people.
func (c confinement) sandbox(memMiB, maxTasks, total int) Sandbox {
	var missing []string
	s := Sandbox{Confined: c.bwrap != "", Mode: c.tier.mode, User: "uid 65534 (nobody)"}
	if os.Geteuid() != 0 {
		s.User = fmt.Sprintf("uid 65534 in a user namespace, the host's uid %d outside", os.Geteuid())
	}
	if !s.Confined {
		s.Mode = "limits only"
		s.User = fmt.Sprintf("the host's user (uid %d)", os.Geteuid())
		missing = append(missing, "no network or filesystem walls: the plugin reaches the network and reads and writes what the host's user may, and a process it starts in a new session outlives it unless a cgroup holds it; "+c.why)
	}
	if c.tier.lacks != "" {
		missing = append(missing, c.tier.lacks)
	}
	if c.cg != nil {
		var caps []string
		if v := c.cg.MemoryVersion(); v != "" {
			caps = append(caps, fmt.Sprintf("memory %d MiB (%s)", memMiB, v))
		}
		if v := c.cg.PidsVersion(); v != "" {
			caps = append(caps, fmt.Sprintf("%d processes and threads, %d for all plugins (%s pids)", maxTasks, total, v))
		}
		s.Cgroups = strings.Join(caps, ", ")
	}
	if c.cgWhy != "" {
		missing = append(missing, "the plugin's process tree is not capped as a whole (memory_mib holds per process only, and the number of processes it forks is not capped): "+c.cgWhy)
	}
	if c.prlimit == "" {
		missing = append(missing, "no CPU or file-size rlimits: prlimit is not installed (apt-get install util-linux)")
	}
	s.Degraded = strings.Join(missing, "; ")
	return s
}

// complete reports whether every wall and cap holds: what ConfineRequired asks for.
func (c confinement) complete() error {
	var missing []string
	if c.bwrap == "" {
		missing = append(missing, c.why)
	}
	if c.cg == nil || c.cgWhy != "" {
		missing = append(missing, c.cgWhy)
	}
	if c.prlimit == "" {
		missing = append(missing, "prlimit is not installed (apt-get install util-linux)")
	}
	if len(missing) == 0 {
		return nil
	}
	return errors.New(strings.Join(missing, "; "))
}

// reachable checks that the sandbox's user can run the artifact exe: on a root host the
// plugin runs as sandboxUID, which needs its folder searchable and the artifact readable
// and executable by others (a script is read by its interpreter).
func (c confinement) reachable(exe string) error {
	if c.bwrap == "" || !c.tier.root {
		return nil
	}
	for _, f := range []struct {
		path string
		need os.FileMode
		fix  string
	}{{filepath.Dir(exe), 0o001, "o+x"}, {exe, 0o005, "o+rx"}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&f.need != f.need {
			return fmt.Errorf("the sandbox runs the plugin as uid %d, which cannot reach %s (mode %v): chmod %s %s",
				sandboxUID, f.path, fi.Mode().Perm(), f.fix, f.path)
		}
	}
	return nil
}

// memoryScope says what limits.memory_mib bounds, for messages.
func (c confinement) memoryScope() string {
	if c.memoryByCgroup() {
		return "for the plugin process and all it starts"
	}
	return "per process"
}

// memoryByCgroup reports whether limits.memory_mib is the memory cgroup's limit on the
// plugin's tree (rather than RLIMIT_DATA per process).
func (c confinement) memoryByCgroup() bool { return c.cg != nil && c.cg.MemoryVersion() != "" }

// baseBwrapArgs are the walls common to every tier: new namespaces but the user's, no
// capability, death with the host; the mounts are baseMounts.
func baseBwrapArgs(t bwrapTier) []string {
	args := []string{"--die-with-parent", "--new-session", "--unshare-pid"}
	if !t.root {
		// The plugin is the pid namespace's first process (no bubblewrap init between it
		// and bubblewrap): when it dies, the kernel kills everything else in the
		// namespace, and bubblewrap reaps it itself, so its CPU time reaches the host's
		// accounts (which is how a call ended by limits.cpu_seconds is told apart). On a
		// root host the first process must be bubblewrap's init: setpriv's change of user
		// clears the death signal that ties it to the host, and what runs after it cannot
		// be relied on to set it again; the init keeps it, and waits for the plugin too.
		args = append(args, "--as-pid-1")
	}
	return append(args, "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL")
}

// baseMountPoints are where baseMounts mount; a read path above one of them is mounted
// first, so that it does not hide them.
var baseMountPoints = []string{"/usr", "/proc", "/dev", "/tmp", "/run", sandboxSocketDir}

// baseMounts are the file system every plugin sees: a read-only system, a private /tmp,
// /proc and /dev, and the folder for its sockets. rootShown: a read path shows the host's
// whole root already, its symlinks included.
func baseMounts(rootShown bool) []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	// Merged-/usr systems have /bin, /lib ... as symlinks into /usr; others have folders.
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if rootShown {
				continue
			}
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	// What the dynamic loader and the time zone need; nothing else of /etc (a folder any
	// user may search: bubblewrap running as root would make it 0700).
	if !rootShown {
		args = append(args, "--dir", "/etc")
		for _, f := range []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives"} {
			args = append(args, "--ro-bind-try", f, f)
		}
	}
	// Both tmpfs are the sandbox user's to write in (1777: bubblewrap makes them as root
	// when the host is root), and their pages count against the memory cgroup.
	return append(args, "--proc", "/proc", "--dev", "/dev",
		"--perms", "1777", "--size", strconv.Itoa(sandboxTmpBytes), "--tmpfs", "/tmp",
		// /run holds only the socket folder (and hides the host's /run from a plugin that
		// reads "/").
		"--perms", "0755", "--size", strconv.Itoa(socketDirBytes), "--tmpfs", "/run",
		"--perms", "1777", "--size", strconv.Itoa(socketDirBytes), "--tmpfs", sandboxSocketDir)
}

// above reports whether path is a folder above (or at) one of the base mount points.
func above(path string) bool {
	for _, m := range baseMountPoints {
		if path == "/" || m == path || strings.HasPrefix(m, path+"/") {
			return true
		}
	}
	return false
}

// launch is how one plugin process is started: the command line (prlimit, bubblewrap,
// then the plugin) and its environment.
type launch struct {
	path string
	args []string // argv without argv[0]
	env  []string
}

// command builds the launch of the artifact exe (its real path) under c, with lim's
// rlimits, reads made read-only visible, socketDir (go-plugin's folder of the host's Unix
// sockets) visible read-only, and env as the whole environment.
func (c confinement) command(exe string, args []string, reads []string, socketDir string, lim host.Limits, env []string) launch {
	argv := append([]string{exe}, args...)
	if c.bwrap != "" {
		dir := filepath.Dir(exe)
		b := append(slices.Clone(c.tier.args), baseBwrapArgs(c.tier)...)
		if c.tier.root {
			// For setpriv to drop the plugin to sandboxUID; it drops these too.
			b = append(b, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
		}
		made := map[string]bool{"/": true}
		bind := func(path string) {
			// bubblewrap running as root makes the missing folders above a mount point
			// 0700, which would hide what is below them from the plugin's user; they
			// are made world-searchable first.
			var parents []string
			for p := filepath.Dir(path); !made[p]; p = filepath.Dir(p) {
				made[p] = true
				parents = append(parents, p)
			}
			for _, p := range slices.Backward(parents) {
				if !above(p) && !strings.HasPrefix(p, "/usr/") && !strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(p, "/dev/") {
					b = append(b, "--dir", p)
				}
			}
			made[path] = true
			b = append(b, "--ro-bind", path, path)
		}
		for _, r := range reads {
			if above(r) {
				b = append(b, "--ro-bind", r, r)
			}
		}
		b = append(b, baseMounts(slices.Contains(reads, "/"))...)
		for _, r := range reads {
			if !above(r) {
				bind(r)
			}
		}
		bind(dir)
		// The host's sockets (the judge's broker) are reached read-only: connecting to a
		// socket needs no write access to its folder, and the plugin writes nothing there.
		bind(socketDir)
		b = append(b, "--chdir", dir, "--")
		if c.tier.root {
			// setuid clears the death signal bubblewrap set; setpriv sets it again.
			b = append(b, c.setpriv, "--reuid="+uid, "--regid="+uid, "--clear-groups", "--bounding-set=-all", "--inh-caps=-all", "--pdeathsig=SIGKILL", "--")
			if c.tier.inner {
				b = append(b, c.bwrap, "--unshare-user", "--uid", uid, "--gid", uid, "--disable-userns", "--die-with-parent", "--dev-bind", "/", "/", "--chdir", dir, "--")
			}
		}
		argv = append(append([]string{c.bwrap}, b...), argv...)
	}
	if c.prlimit != "" {
		p := []string{c.prlimit, "--core=0", "--fsize=" + strconv.Itoa(fileSizeBytes)}
		if lim.MemoryMiB > 0 && !c.memoryByCgroup() {
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

// setEnv returns env with name set to value.
func setEnv(env []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+value)
}

// socketConfig is go-plugin's socket settings: when the plugin runs as sandboxUID on a
// root host, the host's sockets (and their folder) belong to its group, so that it can
// connect to them.
func (c confinement) socketConfig() *plugin.UnixSocketConfig {
	if c.bwrap == "" || !c.tier.root {
		return nil
	}
	return &plugin.UnixSocketConfig{Group: uid}
}

// CheckEnv refuses a manifest env that would hand the plugin a credential or override
// go-plugin's variables, with what to remove: the check the loader makes, for a tool that
// writes a manifest and must not write one the loader refuses.
func CheckEnv(env map[string]string) error {
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

// stderrSaysNoThread reports whether a plugin's stderr says it could not start a thread:
// glibc's pthread_create (Go with cgo: "runtime/cgo: pthread_create failed") or Go's own
// ("failed to create new OS thread"). Under RLIMIT_DATA that is memory: a thread's stack
// is private writable memory.
func stderrSaysNoThread(b []byte) bool {
	return bytes.Contains(b, []byte("pthread_create failed")) || bytes.Contains(b, []byte("failed to create new OS thread"))
}
