package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/service/store"
)

// A tenant's judge: the endpoint and model its agents' runs are judged with (an agent
// policy's "judge", among the endpoints the operator allows), and the tenant's own API
// key for an endpoint. The key is sealed under the operator's secret key
// (internal/service/secrets) before it is stored, bound to the tenant and the endpoint; it is
// given to this process's judge broker in memory only, and never returned, logged or put
// in an error. Every process refreshes the broker's copy of a tenant's keys before it
// scores for the tenant (each job, each POST /v1/score), so a key stored through one
// process is used by workers on other machines from their next job on.

// JudgeEndpoint is an endpoint the operator allows, as a tenant sees it: never a key.
type JudgeEndpoint struct {
	broker.EndpointInfo
	// Key says whether the tenant stored its own key here, never the key.
	Key JudgeKeyState `json:"key"`
}

// JudgeKeyState is what a tenant may know of its own key for an endpoint.
type JudgeKeyState struct {
	// Stored: the tenant stored a key here; its calls here use it.
	Stored bool `json:"stored"`
	// UpdatedAt is when it was stored.
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	// Problem says why a stored key cannot be used (the operator's secret key changed);
	// the tenant's calls here then fail rather than use another key.
	Problem string `json:"problem,omitempty"`
}

// errNoJudge is the message of a judge request to a service without a judge broker.
const errNoJudge = "this service has no judge: the operator starts it with --judge-url and --judge-model (docs/SERVICE.md)"

// keyAD binds a sealed key to its tenant and endpoint: a sealed value moved to another
// tenant's row, or another endpoint's, does not open.
func keyAD(tenantID int64, endpoint string) []byte {
	return fmt.Appendf(nil, "scorekit judge key\x00tenant %d\x00endpoint %s", tenantID, endpoint)
}

// judgeRoute checks r against the endpoints the operator allows and returns it with the
// endpoint's name and model filled in; nil stays nil (the operator's default).
func (s *Service) judgeRoute(r *broker.Route) (*broker.Route, error) {
	if r == nil {
		return nil, nil
	}
	if s.opts.Judge == nil {
		return nil, invalid("judge: %s", errNoJudge)
	}
	if err := s.opts.Judge.CheckRoute(*r); err != nil {
		return nil, invalid("%s", strings.TrimPrefix(err.Error(), "judge: "))
	}
	out := *r
	if out.Endpoint == "" {
		out.Endpoint = broker.DefaultEndpoint
	}
	for _, e := range s.opts.Judge.Endpoints() {
		if e.Name == out.Endpoint && out.Model == "" {
			out.Model = e.Model
		}
	}
	return &out, nil
}

// endpoint returns the endpoint called name, or an error naming the ones there are.
func (s *Service) endpoint(name string) (broker.EndpointInfo, error) {
	if s.opts.Judge == nil {
		return broker.EndpointInfo{}, invalid("judge: %s", errNoJudge)
	}
	var names []string
	for _, e := range s.opts.Judge.Endpoints() {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return broker.EndpointInfo{}, &Error{kind: ErrNotFound, msg: fmt.Sprintf("judge endpoint %q is not one the operator allows (allowed: %s)", name, strings.Join(names, ", "))}
}

// JudgeEndpoints lists the endpoints the operator allows, with the state of the tenant's
// own key for each.
func (s *Service) JudgeEndpoints(ctx context.Context, t store.Tenant) ([]JudgeEndpoint, error) {
	if s.opts.Judge == nil {
		return []JudgeEndpoint{}, nil
	}
	keys, err := s.st.JudgeKeys(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	byName := map[string]store.JudgeKey{}
	for _, k := range keys {
		byName[k.Endpoint] = k
	}
	var out []JudgeEndpoint
	for _, e := range s.opts.Judge.Endpoints() {
		je := JudgeEndpoint{EndpointInfo: e}
		if k, ok := byName[e.Name]; ok {
			at := k.UpdatedAt
			je.Key = JudgeKeyState{Stored: true, UpdatedAt: &at}
			if _, err := s.openKey(k); err != nil {
				je.Key.Problem = err.Error()
			}
		}
		out = append(out, je)
	}
	return out, nil
}

// SetJudgeKey seals and stores the tenant's own key for endpoint, replacing any; the
// tenant's calls there use it from then on (in this process at once, in others from
// their next job). Errors never hold the key.
func (s *Service) SetJudgeKey(ctx context.Context, t store.Tenant, endpoint, key string) error {
	if _, err := s.endpoint(endpoint); err != nil {
		return err
	}
	if s.opts.Secrets == nil {
		return &Error{kind: ErrUnavailable, msg: "this service cannot keep tenants' keys: it was started without the operator's secret key " +
			"(set SCOREKIT_SECRET_KEY, e.g. from scorekit secret-key new; docs/SERVICE.md)"}
	}
	if err := broker.CheckKey(key); err != nil {
		return invalid("key: %v", err)
	}
	sealed := s.opts.Secrets.Seal([]byte(key), keyAD(t.ID, endpoint))
	if err := s.st.SetJudgeKey(ctx, t.ID, endpoint, sealed); err != nil {
		return err
	}
	return s.opts.Judge.SetTenantKey(t.Name, endpoint, key)
}

// DeleteJudgeKey removes the tenant's own key for endpoint: its calls there use the
// operator's key again (or fail, on an endpoint that takes tenants' keys only).
func (s *Service) DeleteJudgeKey(ctx context.Context, t store.Tenant, endpoint string) error {
	if _, err := s.endpoint(endpoint); err != nil {
		return err
	}
	if err := s.st.DeleteJudgeKey(ctx, t.ID, endpoint); err != nil {
		return notFound(err, "tenant %q has no key of its own for judge endpoint %q", t.Name, endpoint)
	}
	return s.opts.Judge.SetTenantKey(t.Name, endpoint, "")
}

// openKey opens a stored key; the error says why it cannot be used, never the key.
func (s *Service) openKey(k store.JudgeKey) (string, error) {
	if s.opts.Secrets == nil {
		return "", errors.New("this service was started without the operator's secret key (SCOREKIT_SECRET_KEY), so it cannot open the key the tenant stored")
	}
	pt, err := s.opts.Secrets.Open(k.Sealed, keyAD(k.TenantID, k.Endpoint))
	if err != nil {
		return "", fmt.Errorf("it does not open with the operator's secret key: %w", err)
	}
	return string(pt), nil
}

// prepareJudge gives the broker the tenant's current keys before this process scores for
// it: a key stored or removed through another process takes effect here. A key that does
// not open is recorded as unusable, so the tenant's calls there fail with the reason
// instead of going out with the operator's key.
func (s *Service) prepareJudge(ctx context.Context, t store.Tenant) error {
	if s.opts.Judge == nil {
		return nil
	}
	keys, err := s.st.JudgeKeys(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("judge keys of tenant %s: %w", t.Name, err)
	}
	stored := map[string]store.JudgeKey{}
	for _, k := range keys {
		stored[k.Endpoint] = k
	}
	for _, e := range s.opts.Judge.Endpoints() {
		k, ok := stored[e.Name]
		if !ok {
			if err := s.opts.Judge.SetTenantKey(t.Name, e.Name, ""); err != nil {
				return err
			}
			continue
		}
		key, err := s.openKey(k)
		if err != nil {
			if err := s.opts.Judge.SetTenantKeyUnusable(t.Name, e.Name, err.Error()); err != nil {
				return err
			}
			continue
		}
		if err := s.opts.Judge.SetTenantKey(t.Name, e.Name, key); err != nil {
			return err
		}
	}
	return nil
}

// SecretProblems checks every stored tenant key against the operator's secret key and
// returns one line per key that does not open (tenant, endpoint and why; never a key),
// for serve and worker to say at start.
func (s *Service) SecretProblems(ctx context.Context) ([]string, error) {
	keys, err := s.st.JudgeKeys(ctx, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		if _, err := s.openKey(k); err != nil {
			out = append(out, fmt.Sprintf("tenant id %d, judge endpoint %q: %v", k.TenantID, k.Endpoint, err))
		}
	}
	return out, nil
}

// RotateSecrets seals again, under the current operator key, every stored tenant key
// sealed under an old one (the keyring opens both during a rotation). It returns how
// many it resealed and a line per key it could not open; a key a tenant replaced
// meanwhile is left as the tenant stored it.
func (s *Service) RotateSecrets(ctx context.Context) (int, []string, error) {
	if s.opts.Secrets == nil {
		return 0, nil, errors.New("rotate: no operator secret key: set SCOREKIT_SECRET_KEY to the new key and SCOREKIT_SECRET_KEY_OLD to the old one")
	}
	keys, err := s.st.JudgeKeys(ctx, 0)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	var problems []string
	for _, k := range keys {
		if !s.opts.Secrets.Stale(k.Sealed) {
			continue
		}
		key, err := s.openKey(k)
		if err != nil {
			problems = append(problems, fmt.Sprintf("tenant id %d, judge endpoint %q: %v", k.TenantID, k.Endpoint, err))
			continue
		}
		ok, err := s.st.ResealJudgeKey(ctx, k.TenantID, k.Endpoint, k.Sealed, s.opts.Secrets.Seal([]byte(key), keyAD(k.TenantID, k.Endpoint)))
		if err != nil {
			return n, problems, err
		}
		if ok {
			n++
		}
	}
	return n, problems, nil
}
