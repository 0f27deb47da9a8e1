package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
)

// OpenTenant is the tenant of a service that runs open (no keys, loopback only).
const OpenTenant = "default"

// KeyPrefix starts every API key.
const KeyPrefix = "sk_"

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// CreateTenant creates a tenant. Names are 1-63 lower-case letters, digits, '.', '_' or
// '-', starting with a letter or digit.
func (s *Service) CreateTenant(ctx context.Context, name string, p store.Policy) (store.Tenant, error) {
	if !namePattern.MatchString(name) {
		return store.Tenant{}, invalid("tenant name %q: use 1-63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	if err := checkPolicy(p); err != nil {
		return store.Tenant{}, err
	}
	t, err := s.st.CreateTenant(ctx, name, p)
	if errors.Is(err, store.ErrExists) {
		return t, &Error{kind: ErrExists, msg: fmt.Sprintf("tenant %q exists already", name)}
	}
	return t, err
}

func checkPolicy(p store.Policy) error {
	switch {
	case p.RetentionDays < 0:
		return invalid("policy: retention_days %d: want the days runs are kept, or 0 to keep them until deleted", p.RetentionDays)
	case p.RequestsPerSecond < 0, p.MaxRunsPerEvaluation < 0, p.MaxRunBytes < 0,
		p.Judge.MaxConcurrency < 0, p.Judge.RequestsPerSecond < 0, p.Judge.Burst < 0:
		return invalid("policy: limits must be >= 0 (0 means the default)")
	case p.Judge.TokenBudget < -1:
		return invalid("policy: judge.token_budget %d: want > 0, 0 for the broker's default or -1 for unlimited", p.Judge.TokenBudget)
	}
	if _, err := p.Limits.Within(p.Limits); err != nil {
		return invalid("policy: limits: %v", err)
	}
	if _, err := redact.Compile(p.Redact); err != nil {
		return invalid("policy: %v", err)
	}
	return nil
}

// Tenant returns the tenant called name.
func (s *Service) Tenant(ctx context.Context, name string) (store.Tenant, error) {
	t, err := s.st.Tenant(ctx, name)
	return t, notFound(err, "no tenant %q; create it with scorekit tenants create %s", name, name)
}

// Tenants lists the tenants.
func (s *Service) Tenants(ctx context.Context) ([]store.Tenant, error) { return s.st.Tenants(ctx) }

// SetTenantPolicy replaces a tenant's policy. Scorers opened under the old policy age
// out of the cache; the judge broker takes the new judge limits at the next open.
func (s *Service) SetTenantPolicy(ctx context.Context, name string, p store.Policy) error {
	if err := checkPolicy(p); err != nil {
		return err
	}
	t, err := s.Tenant(ctx, name)
	if err != nil {
		return err
	}
	return s.st.SetTenantPolicy(ctx, t.ID, p)
}

// CreateKey makes a new admin API key for the tenant (see [Service.CreateScopedKey]).
func (s *Service) CreateKey(ctx context.Context, tenant string) (string, store.Key, error) {
	return s.CreateScopedKey(ctx, tenant, store.ScopeAdmin)
}

// CreateScopedKey makes a new API key of scope for the tenant and returns it; only its
// hash is stored, so this is the one time it can be shown. A label key names its
// labeller: [Service.CreateLabellerKey] makes one.
func (s *Service) CreateScopedKey(ctx context.Context, tenant string, scope store.Scope) (string, store.Key, error) {
	if _, err := store.ParseScope(string(scope)); err != nil {
		return "", store.Key{}, invalid("%v: %s", err, scopesHelp)
	}
	if scope == store.ScopeLabel {
		return "", store.Key{}, invalid("a key of scope label writes labels under one labeller's name: give it (scorekit keys create --scope label --labeller NAME)")
	}
	return s.createKey(ctx, tenant, scope, "")
}

// scopesHelp says what each scope may do.
const scopesHelp = "ingest writes runs only, read reads only, label reads and writes one labeller's labels, admin does everything"

// CreateLabellerKey makes a new key of scope label for the tenant: it reads what a read
// key reads and writes labels under labeller's name only. It is returned once.
func (s *Service) CreateLabellerKey(ctx context.Context, tenant, labeller string) (string, store.Key, error) {
	labeller = strings.TrimSpace(labeller)
	if labeller == "" {
		return "", store.Key{}, invalid("a label key needs the labeller whose labels it writes (--labeller NAME)")
	}
	if err := checkLabelName("labeller", labeller); err != nil {
		return "", store.Key{}, err
	}
	return s.createKey(ctx, tenant, store.ScopeLabel, labeller)
}

func (s *Service) createKey(ctx context.Context, tenant string, scope store.Scope, labeller string) (string, store.Key, error) {
	t, err := s.Tenant(ctx, tenant)
	if err != nil {
		return "", store.Key{}, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", store.Key{}, err
	}
	key := KeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(key))
	k, err := s.st.CreateKey(ctx, t.ID, h[:], keyID(key), scope, labeller)
	return key, k, err
}

// KeyLabeller returns the labeller of a live label key ("" for a key of another scope).
func (s *Service) KeyLabeller(ctx context.Context, key string) (string, error) {
	h := sha256.Sum256([]byte(key))
	return s.st.KeyLabeller(ctx, h[:])
}

// keyID is the part of a key shown in listings and used to revoke it.
func keyID(key string) string { return key[:len(KeyPrefix)+8] }

// RevokeKey revokes the tenant's key whose id (its first 11 characters, as keys list
// shows them) or whole text is given.
func (s *Service) RevokeKey(ctx context.Context, tenant, key string) error {
	t, err := s.Tenant(ctx, tenant)
	if err != nil {
		return err
	}
	if len(key) < len(KeyPrefix)+8 || !strings.HasPrefix(key, KeyPrefix) {
		return invalid("key %q: give the key or its id (the first %d characters, as scorekit keys list shows)", key, len(KeyPrefix)+8)
	}
	_, err = s.st.RevokeKey(ctx, t.ID, keyID(key))
	return notFound(err, "tenant %q has no live key %s", tenant, keyID(key))
}

// Keys lists the tenant's keys (ids only).
func (s *Service) Keys(ctx context.Context, tenant string) ([]store.Key, error) {
	t, err := s.Tenant(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return s.st.Keys(ctx, t.ID)
}

// Authenticate returns the tenant of a live key and the key's scope.
func (s *Service) Authenticate(ctx context.Context, key string) (store.Tenant, store.Scope, error) {
	if key == "" {
		return store.Tenant{}, "", &Error{kind: ErrUnauthorized, msg: "missing API key: send Authorization: Bearer KEY (scorekit keys create --tenant NAME makes one)"}
	}
	h := sha256.Sum256([]byte(key))
	t, scope, err := s.st.TenantByKey(ctx, h[:])
	if errors.Is(err, store.ErrNotFound) {
		return t, "", &Error{kind: ErrUnauthorized, msg: "unknown or revoked API key"}
	}
	return t, scope, err
}

// HasKeys reports whether any tenant has a live key: a service without one may run open
// on loopback, for one user.
func (s *Service) HasKeys(ctx context.Context) (bool, error) {
	n, err := s.st.CountLiveKeys(ctx)
	return n > 0, err
}

// Open returns the tenant of open mode, creating it when missing.
func (s *Service) Open(ctx context.Context) (store.Tenant, error) {
	t, err := s.st.Tenant(ctx, OpenTenant)
	if errors.Is(err, store.ErrNotFound) {
		t, err = s.st.CreateTenant(ctx, OpenTenant, store.Policy{})
		if errors.Is(err, store.ErrExists) {
			return s.st.Tenant(ctx, OpenTenant)
		}
	}
	return t, err
}
