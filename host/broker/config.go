package broker

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// API types for Config.APIType.
const (
	// APIOpenAI is any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio ...).
	APIOpenAI = "openai"
	// APIAzure is Azure OpenAI with an api-key header.
	APIAzure = "azure"
	// APIAzureAD is Azure OpenAI with an Entra ID (Azure AD) bearer token in APIKey.
	APIAzureAD = "azure_ad"
)

// Config configures a Broker. The zero value of every optional field takes its default.
type Config struct {
	// BaseURL of the endpoint, e.g. https://api.openai.com/v1 or http://localhost:11434/v1.
	// Required. For Azure, the resource URL https://NAME.openai.azure.com.
	BaseURL string
	// Model is the chat model. Required.
	Model string
	// Models lists the other chat models a request may name (sdk.CompletionRequest.Model,
	// e.g. a rubric's "model"); a request naming a model not listed here is failed with
	// invalid_config and never sent. Optional. Default is none: only Model.
	Models []string
	// APIKey authenticates the broker. Optional (local servers need none). The CLI reads
	// it from an environment variable; never put it in a config file.
	APIKey string
	// Organization is sent as OpenAI-Organization. Optional.
	Organization string
	// APIType is APIOpenAI, APIAzure or APIAzureAD. Optional. Default is APIOpenAI.
	APIType string
	// APIVersion is the Azure api-version. Optional. Default is "2024-06-01" for Azure.
	APIVersion string
	// AzureDeployments maps a model name to its Azure deployment name. Optional. Default:
	// the deployment is named like the model.
	AzureDeployments map[string]string
	// EmbeddingModel is the embeddings model. Optional: without it Embed fails with a
	// message that says to set it.
	EmbeddingModel string
	// Endpoints are more judge endpoints tenants may choose, by name, beside this one
	// (which is named [DefaultEndpoint]): a tenant's route ([WithRoute]) names one and a
	// model it allows, and a tenant may give its own key for any of them
	// ([Broker.SetTenantKey]). Optional. Default is none: every call goes here.
	Endpoints []Endpoint

	// MaxConcurrency caps a tenant's requests in flight. Optional. Default is 16.
	MaxConcurrency int
	// RequestsPerSecond caps a tenant's request rate (attempts, retries included).
	// Optional. Default is 0: unlimited.
	RequestsPerSecond float64
	// Burst is the rate limiter's burst. Optional. Default is MaxConcurrency.
	Burst int
	// TokenBudget caps the prompt plus completion tokens a tenant may spend in each
	// BudgetWindow. Optional. Default is [DefaultTokenBudget]; -1 means unlimited.
	TokenBudget int64
	// BudgetWindow is the period after which a tenant's spent tokens start again from 0.
	// Optional. Default is [DefaultBudgetWindow] (24h); a negative value means never (the
	// budget then covers the broker's life).
	BudgetWindow time.Duration
	// MaxBatch caps the requests of one Complete call and the texts of one Embed call; a
	// larger batch is refused whole, before any request is sent. Optional. Default is
	// [DefaultMaxBatch]; -1 means unlimited.
	MaxBatch int
	// Tenants overrides the limits above for named tenants. Optional. Limits can also be
	// set or replaced after New with [Broker.SetTenantLimits].
	Tenants map[string]Limits

	// MaxTokens caps each completion when the request does not. Optional. Default is 1024.
	MaxTokens int
	// MaxRetries is how many times a request is retried after a 429, a 5xx or a network
	// error. Optional. Default is 4; a negative value means no retries.
	MaxRetries int
	// RequestTimeout bounds one attempt; the call's own deadline bounds all of them.
	// Optional. Default is 60s.
	RequestTimeout time.Duration
	// BackoffBase and BackoffMax shape the exponential backoff between retries: attempt n
	// waits a random duration in [d/2, d] with d = min(BackoffMax, BackoffBase * 2^n),
	// or what Retry-After asks when it asks for longer. Optional. Defaults are 500ms and
	// 30s.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRetryAfter caps how long a Retry-After header may make a request wait before the
	// broker gives up on it. Optional. Default is 60s.
	MaxRetryAfter time.Duration

	// MaxResponseBytes caps the body of one answer from the endpoint; a longer answer
	// fails the request (judge_error) once the cap is read, so a runaway endpoint cannot
	// take the host's memory. Optional. Default is [DefaultMaxResponseBytes] (8 MiB; a
	// judge's answer is a few KB, and embeddings are requested in chunks that stay below).
	MaxResponseBytes int64

	// CacheDir keeps answers on disk so that a new broker (a new process) reuses them.
	// Optional. Default is "": the cache lives in memory only.
	CacheDir string
	// CacheEntries caps the in-memory cache. Optional. Default is 100000.
	CacheEntries int

	// HTTPClient sends the requests. Optional. Default is a client whose transport keeps
	// MaxConcurrency idle connections to the endpoint.
	HTTPClient *http.Client
}

// Endpoint is a judge endpoint the operator allows tenants to choose, beside the Config's
// own. Its limits, retries, timeouts and cache are the Config's.
type Endpoint struct {
	// Name is what tenants choose it by: 1-63 lower-case letters, digits, '.', '_' or '-'.
	// Required; not "default".
	Name string
	// BaseURL of the endpoint, as Config.BaseURL. Required.
	BaseURL string
	// Model is the model a tenant gets on this endpoint when it names none. Required.
	Model string
	// Models lists the other models tenants may choose here. Optional.
	Models []string
	// APIKey is the operator's key here. Optional: a tenant that stored its own key for
	// this endpoint is always called with that one instead.
	APIKey string
	// TenantKeyRequired: only tenants that stored their own key may call this endpoint;
	// the others' calls fail with a message that says how to store one. Optional.
	TenantKeyRequired bool
	// APIType, APIVersion, Organization and AzureDeployments are as in Config. Optional.
	APIType          string
	APIVersion       string
	Organization     string
	AzureDeployments map[string]string
}

// checkEndpoint returns e with defaults filled in, or an error naming the bad field.
func checkEndpoint(e Endpoint) (Endpoint, error) {
	what := fmt.Sprintf("broker: config: endpoint %q", e.Name)
	switch {
	case !endpointName.MatchString(e.Name):
		return e, fmt.Errorf("%s: name: use 1-63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", what)
	case e.Name == DefaultEndpoint:
		return e, fmt.Errorf("%s: the name %q is the main judge's (BaseURL, Model); give this one another", what, DefaultEndpoint)
	case !strings.HasPrefix(e.BaseURL, "http://") && !strings.HasPrefix(e.BaseURL, "https://"):
		return e, fmt.Errorf("%s: url %q: want an http:// or https:// URL", what, e.BaseURL)
	case e.Model == "":
		return e, fmt.Errorf("%s: model is empty; name the model tenants get there when they name none", what)
	}
	for i, m := range e.Models {
		if strings.TrimSpace(m) == "" {
			return e, fmt.Errorf("%s: models[%d] is empty; list model names or drop the entry", what, i)
		}
	}
	switch e.APIType {
	case "":
		e.APIType = APIOpenAI
	case APIOpenAI, APIAzure, APIAzureAD:
	default:
		return e, fmt.Errorf("%s: api type %q: want %q, %q or %q", what, e.APIType, APIOpenAI, APIAzure, APIAzureAD)
	}
	if e.APIType != APIOpenAI && e.APIVersion == "" {
		e.APIVersion = "2024-06-01"
	}
	return e, nil
}

var endpointName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// Defaults: the names the Broker gives its own tenant and endpoint, and the limits every
// tenant gets unless the Config or the tenant says otherwise.
const (
	// DefaultTenant is the tenant of requests made through the Broker itself.
	DefaultTenant = "default"
	// DefaultEndpoint is the name of the Config's own endpoint (BaseURL, Model, Models,
	// APIKey) among the endpoints tenants may choose.
	DefaultEndpoint = "default"
	// DefaultTokenBudget is a tenant's token budget per BudgetWindow: about 600 MASIS
	// evaluations a day. A budget is a guard against runaway spend, not a quota plan;
	// raise it (or set -1) for larger datasets.
	DefaultTokenBudget = 1_000_000
	// DefaultBudgetWindow is the period after which a tenant's budget starts again.
	DefaultBudgetWindow = 24 * time.Hour
	// DefaultMaxBatch caps the requests of one Complete call (and the texts of one Embed
	// call): a scorer asks for one verdict per passage or a few generations, not thousands.
	DefaultMaxBatch = 64
	// DefaultMaxResponseBytes caps one answer's body.
	DefaultMaxResponseBytes = 8 << 20
)

// Limits are one tenant's judge limits. Zero fields take the Config's value; for
// TokenBudget and MaxBatch, -1 means unlimited.
type Limits struct {
	// MaxConcurrency caps the tenant's requests in flight.
	MaxConcurrency int
	// RequestsPerSecond caps the tenant's request rate; Burst is the limiter's burst.
	RequestsPerSecond float64
	Burst             int
	// TokenBudget caps the tenant's prompt plus completion tokens per BudgetWindow.
	TokenBudget int64
	// BudgetWindow is the tenant's budget period; negative means the broker's life.
	BudgetWindow time.Duration
	// MaxBatch caps the requests (or texts) of one Complete (or Embed) call.
	MaxBatch int
}

// check returns an error naming the first field that is out of range.
func (l Limits) check() error {
	switch {
	case l.MaxConcurrency < 0:
		return fmt.Errorf("MaxConcurrency %d: want >= 0", l.MaxConcurrency)
	case l.RequestsPerSecond < 0:
		return fmt.Errorf("RequestsPerSecond %v: want >= 0", l.RequestsPerSecond)
	case l.Burst < 0:
		return fmt.Errorf("Burst %d: want >= 0", l.Burst)
	case l.TokenBudget < -1:
		return fmt.Errorf("TokenBudget %d: want > 0, 0 for the default or -1 for unlimited", l.TokenBudget)
	case l.MaxBatch < -1:
		return fmt.Errorf("MaxBatch %d: want > 0, 0 for the default or -1 for unlimited", l.MaxBatch)
	}
	return nil
}

// withDefaults returns c with defaults filled in, or an error naming the bad field.
func (c Config) withDefaults() (Config, error) {
	if c.BaseURL == "" {
		return c, fmt.Errorf("broker: config: BaseURL is empty; set the judge URL (e.g. --judge-url https://api.openai.com/v1)")
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return c, fmt.Errorf("broker: config: BaseURL %q: want an http:// or https:// URL", c.BaseURL)
	}
	if c.Model == "" {
		return c, fmt.Errorf("broker: config: Model is empty; set the judge model (e.g. --judge-model gpt-4o-mini)")
	}
	for i, m := range c.Models {
		if strings.TrimSpace(m) == "" {
			return c, fmt.Errorf("broker: config: Models[%d] is empty; list model names (e.g. gpt-4o) or drop the entry", i)
		}
	}
	switch c.APIType {
	case "":
		c.APIType = APIOpenAI
	case APIOpenAI, APIAzure, APIAzureAD:
	default:
		return c, fmt.Errorf("broker: config: APIType %q: want %q, %q or %q", c.APIType, APIOpenAI, APIAzure, APIAzureAD)
	}
	if c.APIType != APIOpenAI && c.APIVersion == "" {
		c.APIVersion = "2024-06-01"
	}
	seen := map[string]bool{}
	c.Endpoints = append([]Endpoint(nil), c.Endpoints...) // the caller's slice stays as it was
	for i, e := range c.Endpoints {
		e, err := checkEndpoint(e)
		if err != nil {
			return c, err
		}
		if seen[e.Name] {
			return c, fmt.Errorf("broker: config: endpoint %q is listed twice; give each endpoint its own name", e.Name)
		}
		seen[e.Name] = true
		c.Endpoints[i] = e
	}
	if err := c.defaults().check(); err != nil {
		return c, fmt.Errorf("broker: config: %w", err)
	}
	if c.MaxResponseBytes < 0 {
		return c, fmt.Errorf("broker: config: MaxResponseBytes %d: want > 0 or 0 for the default", c.MaxResponseBytes)
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = 16
	}
	if c.TokenBudget == 0 {
		c.TokenBudget = DefaultTokenBudget
	}
	if c.BudgetWindow == 0 {
		c.BudgetWindow = DefaultBudgetWindow
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 1024
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 4
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = 500 * time.Millisecond
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 30 * time.Second
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = 60 * time.Second
	}
	if c.CacheEntries <= 0 {
		c.CacheEntries = 100000
	}
	for name, l := range c.Tenants {
		if err := l.check(); err != nil {
			return c, fmt.Errorf("broker: config: tenant %q: %w", name, err)
		}
	}
	if c.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = c.MaxConcurrency * 2
		t.MaxIdleConns = c.MaxConcurrency * 4
		c.HTTPClient = &http.Client{Transport: t}
	}
	return c, nil
}

// defaults returns the Config's own limits, which tenants without overrides get.
func (c *Config) defaults() Limits {
	return Limits{MaxConcurrency: c.MaxConcurrency, RequestsPerSecond: c.RequestsPerSecond, Burst: c.Burst,
		TokenBudget: c.TokenBudget, BudgetWindow: c.BudgetWindow, MaxBatch: c.MaxBatch}
}

// resolve lays a tenant's overrides o over the Config's limits: a zero field of o takes
// the Config's value.
func (c *Config) resolve(o Limits) Limits {
	l := c.defaults()
	if o.MaxConcurrency > 0 {
		l.MaxConcurrency = o.MaxConcurrency
	}
	if o.RequestsPerSecond > 0 {
		l.RequestsPerSecond = o.RequestsPerSecond
	}
	if o.Burst > 0 {
		l.Burst = o.Burst
	}
	if o.TokenBudget != 0 {
		l.TokenBudget = o.TokenBudget
	}
	if o.BudgetWindow != 0 {
		l.BudgetWindow = o.BudgetWindow
	}
	if o.MaxBatch != 0 {
		l.MaxBatch = o.MaxBatch
	}
	if l.Burst == 0 {
		l.Burst = l.MaxConcurrency
	}
	return l
}
