package broker

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/scorekit/scorekit/sdk"
)

// Route is where a tenant's judge calls go: one of the endpoints the operator allows, by
// name ("" is [DefaultEndpoint]), and a model it allows there ("" is the endpoint's
// Model). A request that names its own model (sdk.CompletionRequest.Model, a rubric's
// "model") keeps it, within the endpoint's allowed models.
//
// Whatever the route, a tenant that stored its own key for the endpoint
// ([Broker.SetTenantKey]) is called with that key, and its limits and budget are the
// tenant's as ever.
type Route struct {
	Endpoint string `json:"endpoint,omitempty"`
	Model    string `json:"model,omitempty"`
}

type routeKey struct{}

// WithRoute returns ctx carrying r: the judge of a scoring call made with ctx
// ([Broker.MeterJudge], which the host calls with the call's context) sends that call's
// requests along r. A service sets it from the tenant's choice (an agent policy, and a
// scorer version's when it pins one).
func WithRoute(ctx context.Context, r Route) context.Context {
	return context.WithValue(ctx, routeKey{}, r)
}

// RouteFrom returns the route ctx carries, or the zero Route (the default endpoint and
// model).
func RouteFrom(ctx context.Context) Route {
	r, _ := ctx.Value(routeKey{}).(Route)
	return r
}

// EndpointInfo is what tenants may know of an endpoint: never its key.
type EndpointInfo struct {
	// Name is what a route names it by.
	Name string `json:"name"`
	// Model is the model a route that names none gets.
	Model string `json:"model"`
	// Models are every model a route or a request may name there, Model first.
	Models []string `json:"models"`
	// TenantKeyRequired: only tenants that stored their own key may call it.
	TenantKeyRequired bool `json:"tenant_key_required"`
	// Embeddings: embedding requests go to this endpoint (the default one).
	Embeddings bool `json:"embeddings,omitempty"`
}

// target is one endpoint the broker calls, with the operator's key.
type target struct {
	ep     Endpoint
	client *openai.Client
}

func (t *target) models() []string { return append([]string{t.ep.Model}, t.ep.Models...) }

func (t *target) allows(model string) bool {
	return model == t.ep.Model || slices.Contains(t.ep.Models, model)
}

// cred is a tenant's own key for an endpoint, or why it cannot be used.
type cred struct {
	client   *openai.Client
	secret   string
	unusable string
}

type credKey struct{ tenant, endpoint string }

// dest is where one batch goes: the endpoint, the client with the key to use, and the
// model of requests that name none.
type dest struct {
	t      *target
	client *openai.Client
	model  string
}

// key is where a request for model goes, for the cache key: an endpoint's name and
// everything that makes its answers differ.
func (d *dest) key(model string) endpoint {
	e := d.t.ep
	ep := endpoint{URL: e.BaseURL, APIType: e.APIType, APIVersion: e.APIVersion, Organization: e.Organization}
	if e.Name != DefaultEndpoint {
		// The default endpoint's keys stay what they were before endpoints had names, so
		// that answers cached on disk then are found.
		ep.Name = e.Name
	}
	if e.APIType != APIOpenAI {
		ep.Deployment = model
		if dep, ok := e.AzureDeployments[model]; ok {
			ep.Deployment = dep
		}
	}
	return ep
}

// newClient is a go-openai client for e with key, over hc.
func newClient(e Endpoint, key string, hc *http.Client) *openai.Client {
	var oc openai.ClientConfig
	switch e.APIType {
	case APIAzure, APIAzureAD:
		oc = openai.DefaultAzureConfig(key, e.BaseURL)
		oc.APIVersion = e.APIVersion
		if e.APIType == APIAzureAD {
			oc.APIType = openai.APITypeAzureAD
		}
		deployments := e.AzureDeployments
		oc.AzureModelMapperFunc = func(model string) string {
			if d, ok := deployments[model]; ok {
				return d
			}
			return model
		}
	default:
		oc = openai.DefaultConfig(key)
		oc.BaseURL = e.BaseURL
	}
	oc.OrgID = e.Organization
	oc.HTTPClient = hc
	return openai.NewClientWithConfig(oc)
}

// Endpoints lists the endpoints tenants may choose, the default one first.
func (b *Broker) Endpoints() []EndpointInfo {
	out := make([]EndpointInfo, 0, len(b.order))
	for _, name := range b.order {
		t := b.targets[name]
		out = append(out, EndpointInfo{Name: name, Model: t.ep.Model, Models: t.models(),
			TenantKeyRequired: t.ep.TenantKeyRequired, Embeddings: name == DefaultEndpoint && b.cfg.EmbeddingModel != ""})
	}
	return out
}

// CheckRoute returns an error (an *sdk.Error with code invalid_config) when r names an
// endpoint or a model the operator does not allow; the message lists what is allowed.
func (b *Broker) CheckRoute(r Route) error {
	_, _, err := b.target(r)
	return err
}

func (b *Broker) target(r Route) (*target, string, error) {
	name := r.Endpoint
	if name == "" {
		name = DefaultEndpoint
	}
	t, ok := b.targets[name]
	if !ok {
		return nil, "", &sdk.Error{Code: sdk.CodeInvalidConfig, Message: fmt.Sprintf(
			"judge: endpoint %q is not one the operator allows (allowed: %s); choose one of those", name, strings.Join(b.order, ", "))}
	}
	model := r.Model
	if model == "" {
		model = t.ep.Model
	}
	if !t.allows(model) {
		return nil, "", &sdk.Error{Code: sdk.CodeInvalidConfig, Message: fmt.Sprintf(
			"judge: model %q is not allowed on endpoint %q (allowed: %s); use one of those, or ask the operator to allow it",
			model, name, strings.Join(t.models(), ", "))}
	}
	return t, model, nil
}

// dest resolves where the tenant's requests along r go, with which key. A tenant's own
// key, when it stored one for the endpoint, is always the one used; when that key cannot
// be used (it could not be opened), the tenant's calls there fail: they are never sent
// with the operator's key instead.
func (b *Broker) dest(tenant string, r Route) (*dest, error) {
	t, model, err := b.target(r)
	if err != nil {
		return nil, &batchErr{sdk.CodeInvalidConfig, err.Error(), err}
	}
	b.mu.Lock()
	c, ok := b.creds[credKey{tenant, t.ep.Name}]
	b.mu.Unlock()
	switch {
	case ok && c.unusable != "":
		msg := fmt.Sprintf("judge: tenant %q's own key for endpoint %q cannot be used: %s; its calls there are not sent with any other key", tenant, t.ep.Name, c.unusable)
		return nil, &batchErr{sdk.CodeUnavailable, msg, ErrTenantKey}
	case ok:
		return &dest{t: t, client: c.client, model: model}, nil
	case t.ep.TenantKeyRequired:
		msg := fmt.Sprintf("judge: endpoint %q takes tenants' own keys only, and tenant %q has stored none; store one (PUT /v1/judge/endpoints/%s/key) or choose another endpoint", t.ep.Name, tenant, t.ep.Name)
		return nil, &batchErr{sdk.CodeInvalidConfig, msg, ErrTenantKey}
	}
	return &dest{t: t, client: t.client, model: model}, nil
}

// SetTenantKey makes tenant's calls to endpoint use key instead of the operator's, from
// the next request on; an empty key removes it (the operator's is used again). The
// broker keeps the key in memory only and never says it: it is scrubbed, with the
// operator's keys and every other tenant's, from everything the broker returns or stores
// (an endpoint's error or answer echoing it). A key with spaces or control characters is
// refused (it would not fit in a header), without repeating it.
func (b *Broker) SetTenantKey(tenant, endpoint, key string) error {
	t, ok := b.targets[endpoint]
	if !ok {
		return fmt.Errorf("broker: endpoint %q is not one the operator allows (allowed: %s)", endpoint, strings.Join(b.order, ", "))
	}
	if err := CheckKey(key); key != "" && err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := credKey{tenant, endpoint}
	if key == "" {
		delete(b.creds, k)
		b.rescrub()
		return nil
	}
	if c, ok := b.creds[k]; ok && c.unusable == "" && c.secret == key {
		return nil // a service sets a tenant's keys before each job: the same key keeps its client
	}
	b.creds[k] = &cred{client: newClient(t.ep, key, b.cfg.HTTPClient), secret: key}
	b.rescrub()
	return nil
}

// SetTenantKeyUnusable records that tenant has a key of its own for endpoint that cannot
// be used (reason says why, e.g. it does not open with the operator's secret key): the
// tenant's calls there fail with reason until SetTenantKey replaces it.
func (b *Broker) SetTenantKeyUnusable(tenant, endpoint, reason string) error {
	if _, ok := b.targets[endpoint]; !ok {
		return fmt.Errorf("broker: endpoint %q is not one the operator allows (allowed: %s)", endpoint, strings.Join(b.order, ", "))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.creds[credKey{tenant, endpoint}] = &cred{unusable: reason}
	b.rescrub()
	return nil
}

// CheckKey returns an error when key cannot be an API key: empty, longer than 4 KiB, or
// holding spaces or control characters (a key goes in an HTTP header). The error never
// repeats the key.
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("the key is empty")
	case len(key) > 4096:
		return fmt.Errorf("the key is %d bytes; an API key is at most 4096", len(key))
	}
	for i, r := range key {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII {
			return fmt.Errorf("the key has a space, a control or a non-ASCII character at byte %d; an API key is printable ASCII (no spaces)", i)
		}
	}
	return nil
}
