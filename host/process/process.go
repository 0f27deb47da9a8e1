// Package process runs scorers as out-of-process plugins on hashicorp/go-plugin, over gRPC.
//
// A process plugin is a manifest (NAME.plugin.json, runtime "process") beside an executable
// that speaks go-plugin's handshake and serves the Scorer service of
// proto/scorekit/plugin/v1/plugin.proto. A Go scorer becomes one with serve.Main; other
// languages implement the handshake line, the gRPC health service and the Scorer service
// (examples/node-scorer).
//
// # Why
//
//   - One process per artifact serves every scorer it carries: each scorer opened (with its
//     config) gets a configured instance in whichever process serves its call. Processes
//     are pooled per tenant (up to Limits.PoolSize, each called one call at a time), never
//     shared across tenants: a crash or hang kills only that tenant's calls. The 11
//     heuristic scorers took 22 processes as one process per scorer; they now take one
//     per concurrent call (BENCHMARKS.md).
//   - A plugin runs confined (sandbox.go, docs/SANDBOX.md): an empty environment plus its
//     manifest's env, a process group of its own killed as a group, a death signal tied to
//     the host, rlimits on CPU time and file size (prlimit), a cgroup of its own for it
//     and all it starts (host/internal/cgroup: memory and processes capped for the tree, the tree
//     killed through it), and where bubblewrap works, no network, an unprivileged user
//     (never root), a read-only view of its artifact's folder and the system's libraries,
//     a private /tmp and a pid namespace that dies with it. Where bubblewrap or the
//     cgroups cannot be had, the plugin runs with what remains, and Load says so (a
//     warning, and Sandbox()); ConfineRequired refuses it.
//   - The host starts the process itself (procRunner) rather than letting go-plugin do it:
//     go-plugin appends the host's environment to the plugin's, kills only the plugin's
//     pid, and waits for EOF on its stdout and stderr, which a child of the plugin may hold
//     for ever. Every wait on a plugin is bounded: start (StartTimeout), calls (their
//     deadline), stop and kill.
//   - The artifact's sha256 is checked before every (re)start, so an executable swapped
//     after Load is refused too (go-plugin's SecureConfig does the same, but only for the
//     runner it starts itself).
//   - The judge is the host's: a plugin's scorer gets an sdk.Judge whose requests the host
//     runs. On the unary path the host serves a Judge service over one GRPCBroker
//     connection per process, set up on the first call that has a judge; each call
//     carries an id that the host maps to the caller's judge, tenant context and the
//     capabilities the scorer declared, so a plugin holds no API key and cannot use a
//     capability it did not declare.
//   - Calls travel on one gRPC stream per process (Session) when the plugin offers it, and
//     so do the judge requests inside a call and their answers: a message on an open stream
//     costs less than a unary call, and a callback less than a broker round trip. Plugins
//     that only serve unary calls (the Node example) get unary Score calls and the broker
//     Judge service.
//   - A call that misses its deadline kills its process group (SIGKILL): the plugin may be
//     spinning and a graceful shutdown would wait. The call fails at its deadline; the
//     pool slot returns once the process is gone, and the next call starts a fresh one.
//   - Messages are capped both ways at the host's limits (Options.MaxCallBytes, the result
//     limit): a plugin cannot make the host buffer a 50 MB answer.
package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/sdk"
)

// Options configure how plugins are started. The zero value is usable.
type Options struct {
	// Logger receives the plugins' stderr (their JSON log lines keep level and fields) and
	// what they print after the handshake. Optional. Default is slog.Default().
	Logger *slog.Logger
	// AutoMTLS makes go-plugin negotiate mutual TLS with each plugin. Optional. Default is
	// false: the host and the plugin talk over a Unix socket only they can reach. The
	// plugin must support it (Go plugins built with serve.Main do; the Node example does not).
	AutoMTLS bool
	// StartTimeout bounds the start of one plugin process, up to its handshake line, and
	// each of the calls that set it up (Info, Configure). Optional. Default is 10s.
	StartTimeout time.Duration
	// Unary makes every call a unary Score call, with judge requests on the Judge service
	// the host serves through the GRPCBroker, even when the plugin offers a Session.
	// Optional. Default is false: a Session when the plugin offers one (Go plugins do).
	Unary bool
	// Limits are the host's ceilings: a manifest may ask for less, never more (Load fails
	// naming the ceiling), and a tenant's limits lower them further at Open. Optional.
	// Zero fields take DefaultLimits().
	Limits host.Limits
	// MaxCallBytes caps the encoded run the host sends in one call; a larger run fails with
	// limit_exceeded before it reaches the plugin. Optional. Default is DefaultMaxCallBytes.
	MaxCallBytes int
	// Confine says how far plugins are confined. Optional. Default is ConfineAuto.
	Confine Confinement
	// Bwrap is the bubblewrap executable. Optional. Default is "bwrap" looked up in PATH.
	Bwrap string
	// MaxProcesses caps the processes and threads (the kernel's pids controller counts
	// both) of one plugin process and everything it starts. Optional. Default is
	// DefaultMaxProcesses. Needs the pids cgroup controller (Sandbox says whether it binds).
	MaxProcesses int
	// MaxProcessesTotal caps the processes and threads of every plugin process of this
	// host together; the host's cgroup is one per host process, so the last Load sets it.
	// Optional. Default is DefaultMaxProcessesTotal.
	MaxProcessesTotal int
	// NoCgroups turns the cgroup caps off: memory_mib then holds per process (RLIMIT_DATA)
	// and forks are not capped. Optional. Default is false: the host uses the memory and
	// pids controllers of whichever cgroup hierarchy (v1 or v2) offers them.
	NoCgroups bool
}

// DefaultMaxProcesses is Options.MaxProcesses when zero: a Go or Node plugin runs about a
// dozen threads; the rest is room for the children and threads of a busy one.
const DefaultMaxProcesses = 256

// DefaultMaxProcessesTotal is Options.MaxProcessesTotal when zero.
const DefaultMaxProcessesTotal = 4096

// DefaultStartTimeout is the start timeout when Options.StartTimeout is zero.
const DefaultStartTimeout = 10 * time.Second

// DefaultMaxCallBytes is the largest encoded run sent to a plugin in one call when
// Options.MaxCallBytes is zero: a transport cap above host.DefaultMaxRunBytes (8 MiB), so a
// run the host's run limits accept is never refused here.
const DefaultMaxCallBytes = 16 << 20

// DefaultLimits are the host's ceilings for process plugins when Options.Limits leaves a
// field zero; a manifest that asks for nothing runs under them.
func DefaultLimits() host.Limits {
	return host.Limits{
		MemoryMiB:      512,
		TimeoutMS:      int(host.DefaultTimeout / time.Millisecond),
		MaxResultBytes: 1 << 20,
		MaxOutputBytes: 64 << 10,
		PoolSize:       4,
		MaxCalls:       10_000,
		CPUSeconds:     600,
	}
}

// Errors callers branch on.
var (
	// ErrStart: the plugin process could not be started or did not complete the handshake
	// (exited at start, printed something else than the handshake, timed out, speaks
	// another protocol version).
	ErrStart = errors.New("start plugin")
	// ErrScorers: the artifact's scorers differ from the manifest's "scorers".
	ErrScorers = errors.New("plugin scorers differ from manifest")
	// ErrNotConfined: Options.Confine is ConfineRequired and the plugin cannot be confined
	// here: bubblewrap cannot run, the cgroup memory or pids controller is missing, or
	// prlimit is.
	ErrNotConfined = errors.New("plugin cannot be confined")
)

// artifact is one plugin executable, shared by the Plugins of the scorers it carries, with
// its processes: one pool per tenant.
type artifact struct {
	m       host.Manifest
	exe     string   // the artifact's real path
	reads   []string // real paths the sandbox shows read-only
	conf    confinement
	sandbox Sandbox
	lim     host.Limits // the manifest's limits within the host's ceilings
	maxCall int
	opts    Options
	log     *slog.Logger
	// session: the plugin offers the Session stream and Options.Unary is false.
	session bool

	mu    sync.Mutex
	pools map[poolKey]*pool
}

// Load checks m (artifact sha256, env, read paths, limits against the host's ceilings),
// starts the plugin once to read the scorers it carries, stops it, and returns one
// host.Plugin per scorer. Their Opens share the artifact's processes.
func Load(ctx context.Context, m host.Manifest, opts Options) ([]host.Plugin, error) {
	if m.Runtime != host.RuntimeProcess {
		return nil, fmt.Errorf("load plugin %s: runtime %q: want %q", m.Name, m.Runtime, host.RuntimeProcess)
	}
	if err := m.VerifyArtifact(); err != nil {
		return nil, fmt.Errorf("load plugin: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxCallBytes <= 0 {
		opts.MaxCallBytes = DefaultMaxCallBytes
	}
	if opts.MaxProcesses <= 0 {
		opts.MaxProcesses = DefaultMaxProcesses
	}
	if opts.MaxProcessesTotal <= 0 {
		opts.MaxProcessesTotal = DefaultMaxProcessesTotal
	}
	opts.Limits = withDefaults(opts.Limits)
	lim, err := m.Limits.Within(opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", m.Name, err)
	}
	if err := CheckEnv(m.Env); err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", m.Name, err)
	}
	reads, err := readPaths(m)
	if err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", m.Name, err)
	}
	exe, err := filepath.EvalSymlinks(m.ArtifactPath())
	if err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", m.Name, err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", m.Name, err)
	}
	conf := probeConfinement(opts.Confine, opts.Bwrap, opts.NoCgroups)
	a := &artifact{
		m: m, exe: exe, reads: reads, conf: conf, sandbox: conf.sandbox(lim.MemoryMiB, opts.MaxProcesses, opts.MaxProcessesTotal), lim: lim, maxCall: opts.MaxCallBytes,
		opts: opts, log: opts.Logger.With("plugin", m.Name), pools: map[poolKey]*pool{},
	}
	if opts.Confine == ConfineRequired {
		if err := conf.complete(); err != nil {
			return nil, fmt.Errorf("load plugin %s: %w: %v; the host requires the sandbox (--require-sandbox, require_sandbox): fix what is missing, or let plugins run degraded",
				m.Name, ErrNotConfined, err)
		}
	}
	if err := conf.reachable(exe); err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", m.Name, err)
	}
	if conf.cg != nil {
		if err := conf.cg.SetTotal(opts.MaxProcessesTotal); err != nil {
			return nil, fmt.Errorf("load plugin %s: cap the plugins' processes: %w", m.Name, err)
		}
	}
	if a.sandbox.Degraded != "" {
		a.log.Warn("process plugin runs DEGRADED: "+a.sandbox.Degraded, "sandbox", a.sandbox.Mode)
	}

	infos, err := a.readInfos(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]host.Plugin, len(infos))
	for i, info := range infos {
		out[i] = &scorerPlugin{a: a, info: info, live: map[*backend]struct{}{}}
	}
	return out, nil
}

// withDefaults returns l with its zero fields taken from DefaultLimits.
func withDefaults(l host.Limits) host.Limits {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *int }{
		{&l.MemoryMiB, &d.MemoryMiB}, {&l.TimeoutMS, &d.TimeoutMS}, {&l.MaxResultBytes, &d.MaxResultBytes},
		{&l.MaxOutputBytes, &d.MaxOutputBytes}, {&l.PoolSize, &d.PoolSize}, {&l.MaxCalls, &d.MaxCalls},
		{&l.CPUSeconds, &d.CPUSeconds},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}

// readInfos starts the plugin once, asks it for its scorers and stops it.
func (a *artifact) readInfos(ctx context.Context) ([]sdk.Info, error) {
	// go-plugin bounds the start (StartTimeout); the Info call gets as long again.
	p, err := a.startBounded(ctx, a.lim, a.log, func() {})
	if err != nil {
		return nil, fmt.Errorf("load plugin: %w", err)
	}
	defer p.stop()
	ictx, cancel := context.WithTimeout(ctx, a.opts.StartTimeout)
	defer cancel()
	resp, err := p.conn.Scorer.Info(ictx, &pluginpb.InfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("load plugin %s: info: %w", a.m.Name, err)
	}
	a.session = resp.GetSession() && !a.opts.Unary
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.GetInfosJson(), &raws); err != nil {
		return nil, fmt.Errorf("load plugin %s: info: decode: %w; the plugin must answer Info with a JSON array of sdk.Info", a.m.Name, err)
	}
	infos := make([]sdk.Info, len(raws))
	for i, raw := range raws {
		if infos[i], err = host.DecodeInfo(raw); err != nil {
			return nil, fmt.Errorf("load plugin %s: info[%d]: %w", a.m.Name, i, err)
		}
	}
	if len(infos) == 0 {
		return nil, fmt.Errorf("load plugin %s: the plugin carries no scorer; register one with serve.Register", a.m.Name)
	}
	if err := checkScorers(a.m, infos); err != nil {
		return nil, err
	}
	return infos, nil
}

func checkScorers(m host.Manifest, infos []sdk.Info) error {
	if len(m.Scorers) == 0 {
		return nil
	}
	names := make([]string, len(infos))
	for i, info := range infos {
		names[i] = info.Name
	}
	if fmt.Sprint(names) != fmt.Sprint(m.Scorers) {
		return fmt.Errorf("load plugin %s: %w: manifest lists %v, artifact carries %v; update the manifest's \"scorers\"",
			m.Name, ErrScorers, m.Scorers, names)
	}
	return nil
}

// pool returns the tenant's pool under lim, making it, and counts one more backend on it.
func (a *artifact) pool(tenant string, lim host.Limits) *pool {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := poolKey{tenant: tenant, lim: lim}
	p, ok := a.pools[k]
	if !ok {
		p = newPool(a, k)
		a.pools[k] = p
	}
	p.users++
	return p
}

// unuse counts one backend less on p and stops p's processes when it was the last.
func (a *artifact) unuse(p *pool) {
	a.mu.Lock()
	p.users--
	last := p.users == 0
	if last {
		delete(a.pools, p.key)
	}
	a.mu.Unlock()
	if last {
		p.close()
	}
}

// Usage is what processes hold now.
type Usage struct {
	// Processes counts the plugin processes, their children and the sandbox's helpers.
	Processes int `json:"processes"`
	// RSSBytes is their resident memory, summed.
	RSSBytes int64 `json:"rss_bytes"`
}

func (a *artifact) usage() Usage {
	a.mu.Lock()
	pools := make([]*pool, 0, len(a.pools))
	for _, p := range a.pools {
		pools = append(pools, p)
	}
	a.mu.Unlock()
	var u Usage
	for _, p := range pools {
		for _, pid := range p.pids() {
			for _, q := range processTree(pid) {
				u.Processes++
				u.RSSBytes += rssBytesOf(q)
			}
		}
	}
	return u
}

// UsageOf sums what the processes of the process plugins among ps hold now, counting each
// artifact once (its scorers share its processes). Memory a host reports for itself
// (getrusage, /proc/self) leaves its plugins out; add this.
func UsageOf(ps []host.Plugin) Usage {
	seen := map[*artifact]bool{}
	var u Usage
	for _, p := range ps {
		sp, ok := p.(*scorerPlugin)
		if !ok || seen[sp.a] {
			continue
		}
		seen[sp.a] = true
		au := sp.a.usage()
		u.Processes += au.Processes
		u.RSSBytes += au.RSSBytes
	}
	return u
}

// scorerPlugin is one scorer of an artifact.
type scorerPlugin struct {
	a    *artifact
	info sdk.Info

	mu     sync.Mutex
	live   map[*backend]struct{}
	closed bool
}

var _ host.Plugin = (*scorerPlugin)(nil)

func (p *scorerPlugin) Info() sdk.Info  { return p.info }
func (p *scorerPlugin) Runtime() string { return host.RuntimeProcess }

// Sandbox says how the scorer's processes are confined on this machine.
func (p *scorerPlugin) Sandbox() Sandbox { return p.a.sandbox }

// Limits are the limits the scorer runs under before a tenant's: its manifest's within the
// host's ceilings.
func (p *scorerPlugin) Limits() host.Limits { return p.a.lim }

// Open configures the scorer for tenant t in a process of t's pool (starting one if none is
// idle), so a config the scorer refuses is an error here rather than at the first call.
// The scorer runs under the plugin's limits lowered by t.Limits.
func (p *scorerPlugin) Open(ctx context.Context, t host.Tenant, config json.RawMessage) (host.Backend, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("open %s: plugin %s is closed", p.info.Name, p.a.m.Name)
	}
	p.mu.Unlock()
	b := newBackend(p, t, config)
	if err := b.configureOne(ctx, p.a.opts.StartTimeout); err != nil {
		b.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("open %s: %w", p.info.Name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		b.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("open %s: plugin %s is closed", p.info.Name, p.a.m.Name)
	}
	p.live[b] = struct{}{}
	return b, nil
}

// Close closes every backend opened from p; processes stop when no backend of their pool
// is left.
func (p *scorerPlugin) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	live := p.live
	p.live = map[*backend]struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for b := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Close(ctx)
		}()
	}
	wg.Wait()
	return nil
}

func (p *scorerPlugin) forget(b *backend) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live, b)
}
