package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
)

// Defaults of the publish check's bounds (PublishConfig).
const (
	// DefaultMaxChecks is how many modules a service checks at once, every tenant
	// together: each check is a child process compiling, held to CompileMemoryBytes plus
	// the module's memory_mib.
	DefaultMaxChecks = 2
	// DefaultMaxChecksPerTenant is how many of them one tenant's publishes may be.
	DefaultMaxChecksPerTenant = 1
	// DefaultCheckWait is how long a publish waits for its turn before it is refused
	// with ErrBusy.
	DefaultCheckWait = 5 * time.Second
	// DefaultCompileMemoryBytes is PublishConfig.CompileMemoryBytes's default (and
	// wasm.Vet's).
	DefaultCompileMemoryBytes = 1 << 30
)

// ErrBusy: the service is checking as many modules as it may (for every tenant, or for
// this one); the error is a *BusyError, which says when to try again.
var ErrBusy = errors.New("busy")

// BusyError refuses a publish that found no turn to be checked within
// PublishConfig.CheckWait.
type BusyError struct {
	msg string
	// RetryAfter is when a turn may be free.
	RetryAfter time.Duration
}

func (e *BusyError) Error() string { return e.msg }
func (e *BusyError) Unwrap() error { return ErrBusy }

// PublishCheckStats counts the checks of published modules of a service (each a child
// process compiling the module).
type PublishCheckStats struct {
	// Running and Waiting are the checks running and the publishes waiting for a turn now.
	Running, Waiting int
	// MostRunning is the most that ever ran at once.
	MostRunning int
	// Started counts the checks started; Busy the publishes refused with ErrBusy.
	Started, Busy int64
}

// checkSlots bounds the checks running at once: every tenant's together (a buffered
// channel of PublishConfig.MaxChecks), and each tenant's (one of MaxChecksPerTenant per
// tenant with a check running or waiting). A channel per bound is Go's semaphore; no
// ordering among waiters is promised or needed (each waits at most CheckWait).
type checkSlots struct {
	total     chan struct{}
	perTenant int
	wait      time.Duration

	mu      sync.Mutex
	tenants map[int64]*tenantSlots
	running int
	most    int
	waiting int

	started, busy atomic.Int64
}

type tenantSlots struct {
	ch   chan struct{}
	refs int
}

func newCheckSlots(pc PublishConfig) *checkSlots {
	return &checkSlots{total: make(chan struct{}, pc.MaxChecks), perTenant: pc.MaxChecksPerTenant, wait: pc.CheckWait, tenants: map[int64]*tenantSlots{}}
}

func (c *checkSlots) stats() PublishCheckStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return PublishCheckStats{Running: c.running, Waiting: c.waiting, MostRunning: c.most, Started: c.started.Load(), Busy: c.busy.Load()}
}

// acquire takes a turn for a check of t's, waiting at most CheckWait for its tenant's
// share and then for the service's; release gives it back. Past the wait the answer is a
// *BusyError; when ctx ends first, ctx's error.
func (c *checkSlots) acquire(ctx context.Context, t store.Tenant) (release func(), err error) {
	c.mu.Lock()
	ts := c.tenants[t.ID]
	if ts == nil {
		ts = &tenantSlots{ch: make(chan struct{}, c.perTenant)}
		c.tenants[t.ID] = ts
	}
	ts.refs++
	c.waiting++
	c.mu.Unlock()
	done := func(ran bool) {
		c.mu.Lock()
		c.waiting--
		if ran {
			c.running++
			c.most = max(c.most, c.running)
		} else if ts.refs--; ts.refs == 0 {
			delete(c.tenants, t.ID)
		}
		c.mu.Unlock()
	}

	var timeout <-chan time.Time
	if c.wait > 0 {
		timer := time.NewTimer(c.wait)
		defer timer.Stop()
		timeout = timer.C
	}
	take := func(ch chan struct{}) error {
		select {
		case ch <- struct{}{}:
			return nil
		default:
		}
		if timeout == nil {
			return errBusyNow
		}
		select {
		case ch <- struct{}{}:
			return nil
		case <-timeout:
			return errBusyNow
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	whose := fmt.Sprintf("tenant %q is checking as many modules as its share of the service (%d)", t.Name, c.perTenant)
	err = take(ts.ch)
	if err == nil {
		whose = fmt.Sprintf("the service is checking as many modules as it checks at once (%d)", cap(c.total))
		if err = take(c.total); err != nil {
			<-ts.ch
		}
	}
	if err != nil {
		done(false)
		if errors.Is(err, errBusyNow) {
			c.busy.Add(1)
			retry := max(c.wait, time.Second)
			return nil, &BusyError{RetryAfter: retry, msg: fmt.Sprintf("%s (each compiles its module in a process of its own); publish again in %d s (Retry-After)",
				whose, int(retry.Seconds()))}
		}
		return nil, err
	}
	done(true)
	c.started.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			<-c.total
			<-ts.ch
			c.mu.Lock()
			c.running--
			if ts.refs--; ts.refs == 0 {
				delete(c.tenants, t.ID)
			}
			c.mu.Unlock()
		})
	}, nil
}

var errBusyNow = errors.New("no turn")

// PublishChecks counts the checks of published modules: running, waiting, started and
// refused for want of a turn.
func (s *Service) PublishChecks() PublishCheckStats { return s.checks.stats() }

// publishReader is what the checks before storing a version read: the store, or a
// transaction in progress.
type publishReader interface {
	ScorerUsage(ctx context.Context, tenantID int64) (names, versions int64, err error)
	PublishedVersions(ctx context.Context, tenantID int64, name string) ([]store.ScorerVersion, error)
	HasModule(ctx context.Context, tenantID int64, digest string) (bool, error)
	NeedsModule(ctx context.Context, tenantID int64, digest string) (bool, error)
	StoredBytes(ctx context.Context, tenantID int64) (modules, compiled int64, err error)
}

// admit refuses a version that would take the tenant over a quota, or that is a version
// the tenant has already (not deleted), naming which. module is the module's size (0 for
// a configured scorer); compiled the bytes of its compiled code, 0 before the check has
// compiled it. It reads only the store: it runs before a module is compiled (so a
// publish past a quota or a duplicate costs no compile) and again in the transaction
// that stores the version.
func (s *Service) admit(ctx context.Context, r publishReader, t store.Tenant, v store.ScorerVersion, man *scorers.Manifest, module int, compiled int64) error {
	q := s.quotas(t)
	names, versions, err := r.ScorerUsage(ctx, t.ID)
	if err != nil {
		return err
	}
	existing, err := r.PublishedVersions(ctx, t.ID, v.Name)
	if err != nil {
		return err
	}
	if d, ok := duplicateOf(existing, v, man); ok {
		what := "base and config"
		if v.Kind == store.KindWASM {
			what = "module, manifest and config"
		}
		return &Error{kind: ErrExists, msg: fmt.Sprintf("%s@%d is this version already (the same %s); name it %s@%d, or change something to publish a new version", v.Name, d.Version, what, v.Name, d.Version)}
	}
	newName := !slices.ContainsFunc(existing, func(e store.ScorerVersion) bool { return e.Deleted == nil })
	const raise = "delete versions you no longer need (DELETE /v1/scorers/NAME/versions/N), or ask the operator to raise it (the tenant policy's quotas)"
	if newName && names+1 > int64(q.Scorers) {
		return refused("quota: %d scorers is the most tenant %q may publish (quotas.scorers); %s", q.Scorers, t.Name, raise)
	}
	if versions+1 > int64(q.Versions) {
		return refused("quota: %d versions is the most tenant %q may keep (quotas.versions); %s", q.Versions, t.Name, raise)
	}
	if v.Kind != store.KindWASM {
		return nil
	}
	need := int64(0)
	if have, err := r.HasModule(ctx, t.ID, v.Digest); err != nil {
		return err
	} else if !have {
		need = int64(module) // stored once: a module stored already takes no more room
	}
	if needed, err := r.NeedsModule(ctx, t.ID, v.Digest); err != nil {
		return err
	} else if !needed {
		need += compiled // counted once, while a version needs it
	}
	stored, code, err := r.StoredBytes(ctx, t.ID)
	if err != nil {
		return err
	}
	if stored+code+need > q.StoredBytes {
		this := fmt.Sprintf("%d in this module", module)
		if compiled > 0 {
			this = fmt.Sprintf("%d in this module and its compiled code", need)
		}
		return &Error{kind: ErrTooLarge, msg: fmt.Sprintf("quota: stored module bytes: %d of modules and %d of their compiled code stored, and %s, over the %d tenant %q may store (quotas.stored_bytes); %s",
			stored, code, this, q.StoredBytes, t.Name, raise)}
	}
	return nil
}

// duplicateOf returns the version of existing that v would repeat: not deleted, the same
// kind, digest, config and replaces, and for a module the same limits and scorer (a
// manifest naming no scorer names the module's one).
func duplicateOf(existing []store.ScorerVersion, v store.ScorerVersion, man *scorers.Manifest) (store.ScorerVersion, bool) {
	config := func(c json.RawMessage) string {
		if len(c) == 0 {
			return "{}"
		}
		return string(c)
	}
	for _, e := range slices.Backward(existing) {
		if e.Deleted != nil || e.Kind != v.Kind || e.Digest != v.Digest || e.Replaces != v.Replaces || config(e.Config) != config(v.Config) {
			continue
		}
		if v.Kind != store.KindWASM {
			return e, true
		}
		var em scorers.Manifest
		if json.Unmarshal(e.Manifest, &em) != nil {
			continue
		}
		if em.Limits == man.Limits && (man.Scorer == "" || man.Scorer == em.Scorer) {
			return e, true
		}
	}
	return store.ScorerVersion{}, false
}

// publishModule checks a WASM module and stores it as v, in this order: what needs
// neither the store nor a process (wasm.CheckUpload: size, the module's header, the
// manifest's limits); the quotas and duplicates against the store; a turn among the
// checks running (checkSlots); the quotas again (others may have published while it
// waited); the check that needs a process (wasm.Upload.Vet), compiling into a scratch
// folder of its own; then, in one transaction, the quotas with the compiled code's bytes,
// and the version. Each check is made once. An accepted module's folder, its compiled
// code and the module as the tenant runs it, becomes the tenant's (moduleFiles.place), so
// the first evaluation neither compiles it nor reads it from the store; a refused one's is
// removed.
func (s *Service) publishModule(ctx context.Context, t store.Tenant, req PublishRequest, v store.ScorerVersion) (PublishedVersion, error) {
	pc := s.opts.Publish
	var man scorers.Manifest
	if req.Manifest != nil {
		man = *req.Manifest
	}
	// The module is checked as the file each process runs for this tenant (the module and
	// a section naming the tenant), whose section the service's cap does not count.
	tm := scorers.TenantModule(t, req.Module)
	vo := wasm.VetOptions{Ceilings: pc.Ceilings.Lower(t.Policy.Limits), MaxBytes: pc.MaxModuleBytes + int64(scorers.TenantSectionBytes),
		CompileTimeout: pc.CompileTimeout, CompileMemoryBytes: pc.CompileMemoryBytes, Limits: man.Limits}
	upload, err := wasm.CheckUpload(tm, vo)
	if errors.Is(err, wasm.ErrUploadTooLarge) {
		return PublishedVersion{}, &Error{kind: ErrTooLarge, msg: fmt.Sprintf("module: %d bytes, this service accepts at most %d; strip debug sections (go build -ldflags=-s, wasm-opt --strip-debug)", len(req.Module), pc.MaxModuleBytes)}
	}
	if err != nil {
		return PublishedVersion{}, vetRefusal(req.Name, err)
	}
	sum := sha256.Sum256(req.Module)
	v.Kind, v.Digest = store.KindWASM, "sha256:"+hex.EncodeToString(sum[:])
	if err := s.admit(ctx, s.st, t, v, &man, len(req.Module), 0); err != nil {
		return PublishedVersion{}, err
	}
	release, err := s.checks.acquire(ctx, t)
	if err != nil {
		return PublishedVersion{}, err
	}
	defer release()
	if err := s.admit(ctx, s.st, t, v, &man, len(req.Module), 0); err != nil {
		return PublishedVersion{}, err
	}
	scratch, err := s.files.scratch(t, v.Digest)
	if err != nil {
		return PublishedVersion{}, fmt.Errorf("publish %s: %w", req.Name, err)
	}
	defer scratch.discard()
	// Compiled into the scratch folder, which becomes the tenant's folder of the module
	// once the version is stored: the first evaluation finds it compiled.
	infos, err := upload.WithCacheDir(scratch.dir).Vet(ctx)
	if err != nil {
		return PublishedVersion{}, vetRefusal(req.Name, err)
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	switch {
	case man.Scorer == "" && len(infos) == 1:
		man.Scorer = infos[0].Name
	case man.Scorer == "":
		return PublishedVersion{}, refused("manifest: the module carries the scorers %s; name the one to publish in manifest.scorer", strings.Join(names, ", "))
	case !slices.Contains(names, man.Scorer):
		return PublishedVersion{}, refused("manifest.scorer %q: the module carries %s", man.Scorer, strings.Join(names, ", "))
	}
	info := infos[slices.Index(names, man.Scorer)]
	if err := s.sc.Host().CheckConfig(info, v.Config); err != nil {
		return PublishedVersion{}, refused("config of %s: %s", man.Scorer, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "open "+info.Name+": "), "config: "))
	}
	v.Manifest, _ = json.Marshal(man)
	v.JudgeModel = judgeModel(info, v.Config)
	info.Name = req.Name
	v.Info, _ = json.Marshal(info)
	compiled, err := scorers.CompiledBytes(scratch.dir)
	if err != nil {
		return PublishedVersion{}, fmt.Errorf("publish %s: measure the compiled code: %w", req.Name, err)
	}
	// In the tenant's folder before the version is stored, so that no evaluation finds the
	// version without its code; removed again if the transaction refuses it.
	scratch.writeModule(tm)
	placed := scratch.place()
	promote := false
	err = s.st.InTx(ctx, func(tx *store.Tx) error {
		if err := s.admit(ctx, tx, t, v, &man, len(req.Module), compiled); err != nil {
			return err
		}
		if err := tx.StoreModule(ctx, t.ID, v.Digest, req.Module); err != nil {
			return err
		}
		if err := tx.RecordCompiledSize(ctx, t.ID, v.Digest, compiled); err != nil {
			return err
		}
		var err error
		v, promote, err = publishVersion(ctx, tx, t.ID, v)
		return err
	})
	if err != nil {
		if placed {
			if need, nerr := s.st.NeedsModule(context.WithoutCancel(ctx), t.ID, v.Digest); nerr == nil && !need {
				s.files.removeModule(t, v.Digest)
			}
		}
		return PublishedVersion{}, err
	}
	return publishedView(v, promote), nil
}

// vetRefusal maps wasm.Vet's and wasm.CheckUpload's errors to the service's.
func vetRefusal(name string, err error) error {
	switch {
	case errors.Is(err, wasm.ErrUploadTooLarge):
		return &Error{kind: ErrTooLarge, msg: "module: " + strings.TrimPrefix(err.Error(), "module refused: ")}
	case errors.Is(err, wasm.ErrRefused):
		return refused("module: %s", strings.TrimPrefix(err.Error(), "module refused: "))
	}
	return fmt.Errorf("publish %s: check the module: %w", name, err)
}
