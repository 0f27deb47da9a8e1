package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/service/agreement"
	"github.com/scorekit/scorekit/service/scorers"
	"github.com/scorekit/scorekit/service/store"
)

// Defaults of PublishConfig.
const (
	DefaultMaxModuleBytes = 8 << 20
	DefaultCompileTimeout = 30 * time.Second
)

// PublishConfig says what tenants may publish (see [Service.Publish]).
type PublishConfig struct {
	// CacheDir holds the WASM compilation cache, shared by the processes of a machine,
	// and each tenant's modules as files. Optional. Default is
	// os.UserCacheDir()/scorekit/published.
	CacheDir string
	// MaxModuleBytes caps an uploaded module. Optional. Default is DefaultMaxModuleBytes.
	MaxModuleBytes int64
	// Ceilings are the most a published module's manifest may ask for; a tenant's policy
	// limits lower them. Optional. Zero fields take wasm.DefaultCeilings.
	Ceilings host.Limits
	// CompileTimeout bounds compiling a module at publish. Optional. Default is
	// DefaultCompileTimeout.
	CompileTimeout time.Duration
	// CompileMemoryBytes bounds the memory compiling a module takes at publish, where the
	// check compiles in a child process. Optional.
	CompileMemoryBytes int64
	// MaxScorers, MaxVersions and MaxStoredBytes are each tenant's quotas unless its
	// policy sets its own (store.Quotas): scorer names, versions not deleted, and bytes of
	// stored modules. Optional. Defaults are DefaultMaxScorers, DefaultMaxVersions and
	// DefaultMaxStoredBytes.
	MaxScorers     int
	MaxVersions    int
	MaxStoredBytes int64
}

// The publishing quotas' defaults: generous for a team, bounded for a platform of
// thousands of tenants (a thousand tenants at the byte quota is 256 GiB of modules).
const (
	DefaultMaxScorers     = 100
	DefaultMaxVersions    = 1000
	DefaultMaxStoredBytes = 256 << 20
)

// quotas are the tenant's publishing quotas: its policy's, else the service's.
func (s *Service) quotas(t store.Tenant) store.Quotas {
	q, pc := t.Policy.Quotas, s.opts.Publish
	pick := func(own, service, def int64) int64 {
		switch {
		case own > 0:
			return own
		case service > 0:
			return service
		}
		return def
	}
	return store.Quotas{
		Scorers:     int(pick(int64(q.Scorers), int64(pc.MaxScorers), DefaultMaxScorers)),
		Versions:    int(pick(int64(q.Versions), int64(pc.MaxVersions), DefaultMaxVersions)),
		StoredBytes: pick(q.StoredBytes, pc.MaxStoredBytes, DefaultMaxStoredBytes),
	}
}

// checkQuotas refuses a version that would take the tenant over a quota, naming it.
func (s *Service) checkQuotas(ctx context.Context, tx *store.Tx, t store.Tenant, v store.ScorerVersion, module []byte) error {
	q := s.quotas(t)
	names, versions, err := tx.ScorerUsage(ctx, t.ID)
	if err != nil {
		return err
	}
	existing, err := tx.PublishedVersions(ctx, t.ID, v.Name)
	if err != nil {
		return err
	}
	newName := !slices.ContainsFunc(existing, func(e store.ScorerVersion) bool { return e.Deleted == nil })
	const raise = "delete versions you no longer need (DELETE /v1/scorers/NAME/versions/N), or ask the operator to raise it (the tenant policy's quotas)"
	if newName && names+1 > int64(q.Scorers) {
		return refused("quota: %d scorers is the most tenant %q may publish (quotas.scorers); %s", q.Scorers, t.Name, raise)
	}
	if versions+1 > int64(q.Versions) {
		return refused("quota: %d versions is the most tenant %q may keep (quotas.versions); %s", q.Versions, t.Name, raise)
	}
	if module == nil {
		return nil
	}
	if have, err := tx.HasModule(ctx, t.ID, v.Digest); err != nil || have {
		return err // stored once: it takes no more room
	}
	_, used, err := tx.ModuleUsage(ctx, t.ID)
	if err != nil {
		return err
	}
	if used+int64(len(module)) > q.StoredBytes {
		return &Error{kind: ErrTooLarge, msg: fmt.Sprintf("quota: stored module bytes: %d stored and %d in this module, over the %d tenant %q may store (quotas.stored_bytes); %s",
			used, len(module), q.StoredBytes, t.Name, raise)}
	}
	return nil
}

// ErrRefused: a scorer cannot be published as asked; the message says what is wrong and
// how to fix it.
var ErrRefused = errors.New("scorer refused")

// ErrTooLarge: an upload is larger than the service accepts.
var ErrTooLarge = errors.New("too large")

func refused(format string, args ...any) error {
	return &Error{kind: ErrRefused, msg: fmt.Sprintf(format, args...)}
}

// PublishRequest publishes a new version of a tenant's scorer: either Base and Config
// (a configured scorer), or Module and Manifest (a WASM scorer).
type PublishRequest struct {
	// Name of the scorer in the tenant's namespace.
	Name string
	// Replaces says the scorer takes the place of the host's scorer of the same name, for
	// this tenant only, once a version of it is promoted.
	Replaces bool
	// Base is the host's scorer a configured scorer configures.
	Base string
	// Config is pinned in the version: of Base, or given to the module.
	Config json.RawMessage
	// Module is a WASM module's bytes.
	Module []byte
	// Manifest says what the module runs under.
	Manifest *scorers.Manifest
}

// PublishedVersion is one version of a tenant's scorer as the API shows it.
type PublishedVersion struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	Ref     string `json:"ref" doc:"name@version: how an evaluation or a policy names this version."`
	Kind    string `json:"kind" enum:"configured,wasm"`
	Base    string `json:"base,omitempty" doc:"The scorer a configured scorer configures."`
	// Config is the pinned config.
	Config     json.RawMessage   `json:"config,omitempty"`
	Digest     string            `json:"digest" doc:"The module's sha256 (wasm) or the hash of base and config (configured)."`
	Manifest   *scorers.Manifest `json:"manifest,omitempty"`
	JudgeModel string            `json:"judge_model,omitempty" doc:"The judge model the version pins."`
	Replaces   bool              `json:"replaces"`
	Promoted   bool              `json:"promoted" doc:"The plain name follows this version."`
	Deleted    bool              `json:"deleted"`
	CreatedAt  time.Time         `json:"created_at"`
	Info       *sdk.Info         `json:"info,omitempty"`
	// Gate is what the tenant's agreement gate said of this promotion (the answer to a
	// promotion only).
	Gate *PromotionGate `json:"gate,omitempty" doc:"The agreement gate's report on this promotion, when the tenant requires the gate."`
	// Promotions are the version's promotions, newest first, each with what the gate
	// said and any override (the versions listing only).
	Promotions []PromotionRecord `json:"promotions,omitempty" doc:"The version's promotions, newest first, with the agreement gate's report and any override."`
}

var scorerName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// Publish checks and stores a new version of a tenant's scorer. A configured scorer's
// config is checked against its base's schema; a module is vetted (size, compilation,
// ABI, its Info, its limits within the ceilings) before anything is stored. The first
// version of a name the host does not have is promoted at once; a version that replaces
// a host scorer, and every later version, waits for [Service.Promote].
func (s *Service) Publish(ctx context.Context, t store.Tenant, req PublishRequest) (PublishedVersion, error) {
	if !scorerName.MatchString(req.Name) {
		return PublishedVersion{}, refused("name %q: want 1 to 64 lower case letters, digits, '_' or '-', starting with a letter", req.Name)
	}
	_, hostErr := s.sc.Host().Registry().Lookup(req.Name)
	hostHas := hostErr == nil
	switch {
	case hostHas && !req.Replaces:
		return PublishedVersion{}, refused("name %q is a built-in scorer's; choose another name, or set \"replaces\": true to replace it for your tenant only", req.Name)
	case !hostHas && req.Replaces:
		return PublishedVersion{}, refused("\"replaces\": true, but there is no built-in scorer %q to replace; leave replaces out", req.Name)
	case (req.Base == "") == (len(req.Module) == 0):
		return PublishedVersion{}, refused("give either \"base\" and \"config\" (a configured scorer) or \"module\" and \"manifest\" (a WASM scorer)")
	}
	v := store.ScorerVersion{TenantID: t.ID, Name: req.Name, Replaces: req.Replaces}
	var config bytes.Buffer
	if len(bytes.TrimSpace(req.Config)) > 0 {
		if err := json.Compact(&config, req.Config); err != nil {
			return PublishedVersion{}, refused("config: %v; send a JSON object", err)
		}
	}
	v.Config = json.RawMessage(config.Bytes())
	var module []byte
	var err error
	if req.Base != "" {
		err = s.checkConfigured(t, req, &v)
	} else {
		module, err = s.checkModule(ctx, t, req, &v)
	}
	if err != nil {
		return PublishedVersion{}, err
	}
	promote := false
	err = s.st.InTx(ctx, func(tx *store.Tx) error {
		if err := s.checkQuotas(ctx, tx, t, v, module); err != nil {
			return err
		}
		if module != nil {
			if err := tx.StoreModule(ctx, t.ID, v.Digest, module); err != nil {
				return err
			}
		}
		if v, err = tx.PublishScorerVersion(ctx, v); err != nil {
			return err
		}
		if v.Version == 1 && !v.Replaces {
			promote = true
			return tx.PromoteScorerVersion(ctx, t.ID, v.Name, v.Version)
		}
		return nil
	})
	if err != nil {
		return PublishedVersion{}, err
	}
	return publishedView(v, promote), nil
}

// checkConfigured checks a configured scorer: a base the host has and the tenant may
// run, and a config its schema takes.
func (s *Service) checkConfigured(t store.Tenant, req PublishRequest, v *store.ScorerVersion) error {
	if req.Manifest != nil {
		return refused("\"manifest\" is for a WASM module; a configured scorer takes \"base\" and \"config\"")
	}
	p, err := s.sc.Host().Registry().Lookup(req.Base)
	if err != nil {
		return refused("base %q: no such scorer (known: %s); a configured scorer configures one of the service's scorers", req.Base, strings.Join(s.ScorerNames(t), ", "))
	}
	if !t.Policy.Allows(req.Base) {
		return &Error{kind: ErrNotAllowed, msg: fmt.Sprintf("base %q is not allowed for tenant %q (allowed: %s)", req.Base, t.Name, strings.Join(t.Policy.Scorers, ", "))}
	}
	info := p.Info()
	if err := s.sc.Host().CheckConfig(info, v.Config); err != nil {
		return refused("config of %s: %s", req.Base, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "open "+req.Base+": "), "config: "))
	}
	v.Kind, v.Base = store.KindConfigured, req.Base
	sum := sha256.Sum256(append([]byte(req.Base+"\x00"), v.Config...))
	v.Digest = "sha256:" + hex.EncodeToString(sum[:])
	v.JudgeModel = judgeModel(info, v.Config)
	info.Name = req.Name
	v.Info, _ = json.Marshal(info)
	return nil
}

// judgeModel is the model a version pins: the config's "model" when the scorer asks the
// judge and its config names one (rubric does). A version that names none is called with
// the service's judge model of the moment, and each result records the model it was
// called with: a version cannot pin what its scorer does not choose.
func judgeModel(info sdk.Info, config json.RawMessage) string {
	if !info.Has(sdk.CapJudge) && !info.Has(sdk.CapEmbed) {
		return ""
	}
	var c struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(config, &c) == nil {
		return c.Model
	}
	return ""
}

// checkModule vets a WASM module and its manifest; it returns the module to store.
func (s *Service) checkModule(ctx context.Context, t store.Tenant, req PublishRequest, v *store.ScorerVersion) ([]byte, error) {
	pc := s.opts.Publish
	if int64(len(req.Module)) > pc.MaxModuleBytes {
		return nil, &Error{kind: ErrTooLarge, msg: fmt.Sprintf("module: %d bytes, this service accepts at most %d; strip debug sections (go build -ldflags=-s, wasm-opt --strip-debug)", len(req.Module), pc.MaxModuleBytes)}
	}
	var man scorers.Manifest
	if req.Manifest != nil {
		man = *req.Manifest
	}
	ceil := pc.Ceilings.Lower(t.Policy.Limits)
	if _, err := man.Limits.Within(ceil); err != nil {
		return nil, refused("manifest: %s", strings.TrimPrefix(err.Error(), host.ErrOverCeiling.Error()+": "))
	}
	// The module is checked as the file each process runs for this tenant (the module and
	// a section naming the tenant), into the compilation cache the service's engine
	// reads: the first evaluation finds it compiled, and no other tenant's first use is
	// quicker for it.
	infos, err := wasm.Vet(ctx, scorers.TenantModule(t.Name, req.Module), wasm.VetOptions{Ceilings: ceil, MaxBytes: pc.MaxModuleBytes + int64(scorers.TenantSectionBytes),
		CompileTimeout: pc.CompileTimeout, CompileMemoryBytes: pc.CompileMemoryBytes, Limits: man.Limits, CacheDir: filepath.Join(pc.CacheDir, "wazero")})
	switch {
	case errors.Is(err, wasm.ErrUploadTooLarge):
		return nil, &Error{kind: ErrTooLarge, msg: "module: " + strings.TrimPrefix(err.Error(), "module refused: ")}
	case errors.Is(err, wasm.ErrRefused):
		return nil, refused("module: %s", strings.TrimPrefix(err.Error(), "module refused: "))
	case err != nil:
		return nil, fmt.Errorf("publish %s: check the module: %w", req.Name, err)
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	switch {
	case man.Scorer == "" && len(infos) == 1:
		man.Scorer = infos[0].Name
	case man.Scorer == "":
		return nil, refused("manifest: the module carries the scorers %s; name the one to publish in manifest.scorer", strings.Join(names, ", "))
	case !slices.Contains(names, man.Scorer):
		return nil, refused("manifest.scorer %q: the module carries %s", man.Scorer, strings.Join(names, ", "))
	}
	info := infos[slices.Index(names, man.Scorer)]
	if err := s.sc.Host().CheckConfig(info, v.Config); err != nil {
		return nil, refused("config of %s: %s", man.Scorer, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "open "+info.Name+": "), "config: "))
	}
	sum := sha256.Sum256(req.Module)
	v.Kind, v.Digest = store.KindWASM, "sha256:"+hex.EncodeToString(sum[:])
	v.Manifest, _ = json.Marshal(man)
	v.JudgeModel = judgeModel(info, v.Config)
	info.Name = req.Name
	v.Info, _ = json.Marshal(info)
	return req.Module, nil
}

func publishedView(v store.ScorerVersion, promoted bool) PublishedVersion {
	pv := PublishedVersion{Name: v.Name, Version: v.Version, Ref: fmt.Sprintf("%s@%d", v.Name, v.Version), Kind: v.Kind, Base: v.Base,
		Digest: v.Digest, JudgeModel: v.JudgeModel, Replaces: v.Replaces, Promoted: promoted, Deleted: v.Deleted != nil, CreatedAt: v.CreatedAt}
	if len(v.Config) > 0 && string(v.Config) != "{}" {
		pv.Config = v.Config
	}
	if v.Kind == store.KindWASM {
		var m scorers.Manifest
		if json.Unmarshal(v.Manifest, &m) == nil {
			pv.Manifest = &m
		}
	}
	var info sdk.Info
	if json.Unmarshal(v.Info, &info) == nil && info.Name != "" {
		pv.Info = &info
	}
	return pv
}

// noVersion is the answer for a version the tenant has not published.
func noVersion(name string, n int) error {
	return &Error{kind: ErrNotFound, msg: fmt.Sprintf("you have published no version %s@%d; GET /v1/scorers/%s/versions lists yours", name, n, name)}
}

// noScorer is the answer for a scorer the tenant has not published: the same whether or
// not another tenant has one of that name.
func noScorer(name string) error {
	return &Error{kind: ErrNotFound, msg: fmt.Sprintf("you have published no scorer %q; GET /v1/scorers lists yours", name)}
}

// ScorerVersions lists the versions of the tenant's scorer name, oldest first, with
// which one is promoted.
func (s *Service) ScorerVersions(ctx context.Context, t store.Tenant, name string) ([]PublishedVersion, error) {
	vs, err := s.st.PublishedVersions(ctx, t.ID, name)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, noScorer(name)
	}
	promoted, err := s.st.PromotedVersion(ctx, t.ID, name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	records, err := s.promotionRecords(ctx, t, name)
	if err != nil {
		return nil, err
	}
	out := make([]PublishedVersion, len(vs))
	for i, v := range vs {
		out[i] = publishedView(v, v.Version == promoted)
		out[i].Promotions = records[v.Version]
	}
	return out, nil
}

// ScorerVersion returns version n of the tenant's scorer name.
func (s *Service) ScorerVersion(ctx context.Context, t store.Tenant, name string, n int) (PublishedVersion, error) {
	v, err := s.st.ScorerVersionOf(ctx, t.ID, name, n)
	if errors.Is(err, store.ErrNotFound) {
		return PublishedVersion{}, noVersion(name, n)
	}
	if err != nil {
		return PublishedVersion{}, err
	}
	promoted, err := s.st.PromotedVersion(ctx, t.ID, name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return PublishedVersion{}, err
	}
	return publishedView(v, v.Version == promoted), nil
}

// Promote makes version n the one the plain name follows, from the next evaluation on,
// in every process (each resolves the name from the store). Promoting an older version
// is the rollback; every promotion is kept. When the tenant's policy requires the
// agreement gate, the version must agree with the tenant's labels at least as well as
// the version it replaces (see [Service.VersionTriples]); a worse one is refused with
// ErrGate unless o.Override says why it goes through anyway, which is recorded with the
// promotion. The answer carries the gate's report.
func (s *Service) Promote(ctx context.Context, t store.Tenant, name string, n int, o PromoteOptions) (PublishedVersion, error) {
	override, err := checkOverride(o.Override)
	if err != nil {
		return PublishedVersion{}, err
	}
	v, err := s.ScorerVersion(ctx, t, name, n)
	if err != nil {
		return v, err
	}
	if v.Deleted {
		return v, deletedVersion(v.Ref, name)
	}
	g, err := s.gate(ctx, t, v)
	if err != nil {
		return v, err
	}
	var record json.RawMessage
	if g != nil {
		if g.Report.Decision == agreement.Refuse {
			if override == "" {
				return v, refusal(g)
			}
			g.Override = &GateOverride{Reason: override, By: o.Actor, At: time.Now().UTC()}
		}
		if record, err = json.Marshal(g); err != nil {
			return v, err
		}
	}
	if s.afterGate != nil {
		s.afterGate()
	}
	err = s.st.InTx(ctx, func(tx *store.Tx) error {
		// Decided again under the version's lock: a deletion that landed since the read
		// above refuses the promotion, and a deletion after it waits and sees it.
		if now, err := tx.LockScorerVersion(ctx, t.ID, name, n); err != nil {
			return err
		} else if now.Deleted != nil {
			return deletedVersion(v.Ref, name)
		}
		if g != nil {
			// The gate measured outside this transaction (on SQLite the store's one
			// connection would be the transaction's): another promotion in between makes
			// its comparison stale.
			now, err := tx.PromotedVersion(ctx, t.ID, name)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if now != g.against {
				return &Error{kind: ErrGate, msg: fmt.Sprintf("%s@%d was promoted while the agreement gate measured %s against the version before it; promote again", name, now, v.Ref)}
			}
		}
		return tx.RecordPromotion(ctx, t.ID, name, n, record)
	})
	if err != nil {
		return v, err
	}
	v.Promoted, v.Gate = true, g
	return v, nil
}

// deletedVersion is the refusal of a promotion of a deleted version.
func deletedVersion(ref, name string) error {
	return refused("%s was deleted; promote a version that is not (GET /v1/scorers/%s/versions)", ref, name)
}

// DeleteScorerVersion deletes version n, which must not be the promoted one: it runs no
// more, and its results stay. Its number is never given again. It decides under the
// version's lock (store.Tx.LockScorerVersion), as Promote does, so a promotion and a
// deletion of one version at once leave it promoted or deleted, never both.
func (s *Service) DeleteScorerVersion(ctx context.Context, t store.Tenant, name string, n int) error {
	return s.st.InTx(ctx, func(tx *store.Tx) error {
		v, err := tx.LockScorerVersion(ctx, t.ID, name, n)
		if errors.Is(err, store.ErrNotFound) {
			return noVersion(name, n)
		}
		if err != nil {
			return err
		}
		ref := fmt.Sprintf("%s@%d", name, n)
		if v.Deleted != nil {
			return &Error{kind: ErrNotFound, msg: fmt.Sprintf("%s is deleted already", ref)}
		}
		promoted, err := tx.PromotedVersion(ctx, t.ID, name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if promoted == n {
			return refused("%s is the promoted version; promote another first (POST /v1/scorers/%s/versions/N/promote), then delete it", ref, name)
		}
		return tx.DeleteScorerVersion(ctx, t.ID, name, n)
	})
}

// PublishConfig is the service's publish settings, defaults filled in.
func (s *Service) PublishConfig() PublishConfig { return s.opts.Publish }
