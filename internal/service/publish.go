package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// Defaults of PublishConfig.
const (
	DefaultMaxModuleBytes = 8 << 20
	DefaultCompileTimeout = 30 * time.Second
)

// PublishConfig says what tenants may publish (see [Service.Publish]).
type PublishConfig struct {
	// CacheDir holds each tenant's modules as files and their compiled code, a folder per
	// tenant (by id, never by name) and module, shared by the processes of a machine, and
	// the scratch folders of the checks in progress (see moduleFiles). Optional. Default
	// is os.UserCacheDir()/scorekit/published.
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
	// check compiles in a child process (the module's memory_mib is added for its first
	// instance). Optional. Default is DefaultCompileMemoryBytes.
	CompileMemoryBytes int64
	// MaxChecks bounds the modules this process checks at once, every tenant's together,
	// and so the checking children's memory: at most MaxChecks x (CompileMemoryBytes +
	// the memory_mib ceiling). MaxChecksPerTenant bounds one tenant's share of them. A
	// publish past either waits up to CheckWait for a turn, then is refused with ErrBusy
	// (429, Retry-After); a negative CheckWait refuses at once. Optional. Defaults are
	// DefaultMaxChecks, DefaultMaxChecksPerTenant (at most MaxChecks) and
	// DefaultCheckWait.
	MaxChecks          int
	MaxChecksPerTenant int
	CheckWait          time.Duration
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
// ABI, its Info, its limits within the ceilings) before anything is stored, after every
// refusal that needs no compiling (the quotas, a duplicate of a version the tenant has)
// and in its turn among the checks running (PublishConfig.MaxChecks; ErrBusy past the
// wait). The first version of a name the host does not have is promoted at once; a
// version that replaces a host scorer, and every later version, waits for
// [Service.Promote].
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
	if req.Base == "" {
		return s.publishModule(ctx, t, req, v)
	}
	err := s.checkConfigured(t, req, &v)
	if err != nil {
		return PublishedVersion{}, err
	}
	promote := false
	err = s.st.InTx(ctx, func(tx *store.Tx) error {
		if err := s.admit(ctx, tx, t, v, nil, 0, 0); err != nil {
			return err
		}
		v, promote, err = publishVersion(ctx, tx, t.ID, v)
		return err
	})
	if err != nil {
		return PublishedVersion{}, err
	}
	return publishedView(v, promote), nil
}

// publishVersion stores v in tx as its name's next version and promotes it when it is the
// name's first and replaces no built-in scorer, as Publish and publishModule both do; it
// says whether it promoted it.
func publishVersion(ctx context.Context, tx *store.Tx, tenantID int64, v store.ScorerVersion) (store.ScorerVersion, bool, error) {
	v, err := tx.PublishScorerVersion(ctx, v)
	if err != nil {
		return v, false, err
	}
	if v.Version == 1 && !v.Replaces {
		return v, true, tx.PromoteScorerVersion(ctx, tenantID, v.Name, v.Version)
	}
	return v, false, nil
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
// deletion of one version at once leave it promoted or deleted, never both. When no
// version of the tenant's runs its module any more, the module's compiled code is removed
// and no longer counts toward the tenant's stored bytes.
func (s *Service) DeleteScorerVersion(ctx context.Context, t store.Tenant, name string, n int) error {
	var unneeded string // the module no version of the tenant's needs once this commits
	err := s.st.InTx(ctx, func(tx *store.Tx) error {
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
		if err := tx.DeleteScorerVersion(ctx, t.ID, name, n); err != nil || v.Kind != store.KindWASM {
			return err
		}
		need, err := tx.NeedsModule(ctx, t.ID, v.Digest)
		if err == nil && !need {
			unneeded = v.Digest
		}
		return err
	})
	if err == nil && unneeded != "" {
		// Its compiled code here goes with it (other machines' at their next start); the
		// module stays in the store, for the tenant's export.
		s.files.removeModule(t, unneeded)
	}
	return err
}

// PublishConfig is the service's publish settings, defaults filled in.
func (s *Service) PublishConfig() PublishConfig { return s.opts.Publish }
