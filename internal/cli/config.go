package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/host"
)

// fileConfig is the --config file: per-scorer configs and the judge endpoint.
//
//	{"scorers": {"prescreen": {...}}, "judge": {"url": "...", "model": "...", "key_env": "..."}}
type fileConfig struct {
	// Scorers maps a scorer name to its config object. Optional.
	Scorers map[string]json.RawMessage `json:"scorers"`
	// Judge is the LLM endpoint for scorers that need one. Optional.
	Judge judgeConfig `json:"judge"`
	// Gate holds the CI gates (see score --help). Optional.
	Gate gateConfig `json:"gate"`
	// RunLimits bound the size of one run (host.RunLimits). Optional. Default is the
	// host's defaults, which real runs never reach.
	RunLimits host.RunLimits `json:"run_limits"`
	// RequireSandbox refuses to load a process plugin the host cannot confine (no
	// bubblewrap, no memory and pids cgroup controllers, no prlimit), as --require-sandbox
	// does. Optional. Default is false: such a plugin runs degraded, with a warning.
	RequireSandbox bool `json:"require_sandbox"`
}

// judgeConfig says where the judge broker sends requests and within which limits. The API
// key itself is never in the file: KeyEnv names the variable that holds it.
type judgeConfig struct {
	// URL of an OpenAI-compatible endpoint (https://api.openai.com/v1, http://localhost:11434/v1).
	URL string `json:"url"`
	// Model to ask.
	Model string `json:"model"`
	// Models are the other models a request (a rubric's "model") or a tenant's judge
	// choice may name on this endpoint. Optional.
	Models []string `json:"models"`
	// Endpoints are more endpoints tenants of the service may choose (an agent policy's
	// "judge"), beside this one, which tenants call "default". Optional.
	Endpoints []endpointConfig `json:"endpoints"`
	// KeyEnv names the environment variable holding the API key; it must be set. Optional.
	// Default is OPENAI_API_KEY; "none" for an endpoint that needs no key (local servers).
	KeyEnv string `json:"key_env"`
	// APIType is openai, azure or azure_ad. Optional. Default is openai.
	APIType string `json:"api_type"`
	// APIVersion is the Azure api-version. Optional.
	APIVersion string `json:"api_version"`
	// EmbeddingModel serves scorers that need embeddings. Optional.
	EmbeddingModel string `json:"embedding_model"`
	// CacheDir keeps the judge's answers on disk, so scoring the same runs again costs no
	// calls. Optional. Default is "": answers are cached in memory for one command only.
	CacheDir string `json:"cache_dir"`
	// MaxConcurrency caps requests in flight. Optional. Default is the broker's (16).
	MaxConcurrency int `json:"max_concurrency"`
	// RequestsPerSecond caps the request rate. Optional. Default is unlimited.
	RequestsPerSecond float64 `json:"requests_per_second"`
	// TokenBudget caps the tokens one command may spend. Optional. Default is the
	// broker's (1,000,000 per 24h); -1 is unlimited.
	TokenBudget int64 `json:"token_budget"`
	// MaxBatch caps the requests one scorer call may send at once. Optional. Default is
	// the broker's (64); -1 is unlimited.
	MaxBatch int `json:"max_batch"`
	// MaxTokens caps each completion. Optional. Default is the broker's (1024).
	MaxTokens int `json:"max_tokens"`
	// MaxRetries after a 429, a 5xx or a network error. Optional. Default is the broker's (4).
	MaxRetries int `json:"max_retries"`
}

// endpointConfig is a judge endpoint tenants may choose, by name (broker.Endpoint).
type endpointConfig struct {
	// Name tenants choose it by. Required.
	Name string `json:"name"`
	// URL of the OpenAI-compatible endpoint. Required.
	URL string `json:"url"`
	// Model tenants get there when they name none. Required.
	Model string `json:"model"`
	// Models are the other models tenants may choose there. Optional.
	Models []string `json:"models"`
	// KeyEnv names the environment variable holding the operator's key there. Optional.
	// Default is none: only tenants that store their own key are called with one.
	KeyEnv string `json:"key_env"`
	// TenantKeyRequired: only tenants that stored their own key may call it. Optional.
	TenantKeyRequired bool `json:"tenant_key_required"`
	// APIType is openai, azure or azure_ad; APIVersion the Azure api-version. Optional.
	APIType    string `json:"api_type"`
	APIVersion string `json:"api_version"`
}

const defaultKeyEnv = "OPENAI_API_KEY"

// readConfig reads path; an empty path is an empty config. Unknown keys are errors that
// name the key, so a typo never silently drops a setting.
func readConfig(path string) (fileConfig, error) {
	var c fileConfig
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read config: %w", err)
	}
	if err := decodeStrict(b, &c); err != nil {
		if !errors.Is(err, errTrailingData) {
			err = describeConfigError(err)
		}
		return c, fmt.Errorf("read config %s: %w", path, err)
	}
	if err := c.RunLimits.Validate(); err != nil {
		return c, fmt.Errorf("read config %s: %w", path, err)
	}
	for name, raw := range c.Scorers {
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return c, fmt.Errorf("read config %s: scorers.%s: want a JSON object, got %s", path, name, t)
		}
	}
	return c, nil
}

// errTrailingData: decodeStrict found more after the JSON object.
var errTrailingData = errors.New("trailing data after the JSON object")

// decodeStrict decodes the one JSON object in b into v. An unknown key is an error, so a
// typo never silently drops a setting, and so is anything after the object
// (errTrailingData).
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errTrailingData
	}
	return nil
}

// describeConfigError turns encoding/json's messages into ones that name the key and the
// keys that are allowed.
func describeConfigError(err error) error {
	msg := err.Error()
	if key, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf("unknown key %s (known keys: scorers, judge, gate, run_limits; judge takes url, model, models, endpoints, key_env, api_type, "+
			"api_version, embedding_model, cache_dir, max_concurrency, requests_per_second, token_budget, max_batch, max_tokens, max_retries; "+
			"each of judge.endpoints takes name, url, model, models, key_env, tenant_key_required, api_type, api_version; "+
			"gate takes fail_under, max_failed; run_limits takes max_run_bytes, max_output_bytes, max_context_bytes, max_passages, max_metadata_depth)", key)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("key %q: want %s, got %s", te.Field, te.Type, te.Value)
	}
	return err
}

// checkScorerNames fails when the config names a scorer the registry does not know.
func (c *fileConfig) checkScorerNames(known []string) error {
	for name := range c.Scorers {
		if !slices.Contains(known, name) {
			return fmt.Errorf("config: scorers.%s: unknown scorer (known: %s)", name, strings.Join(known, ", "))
		}
	}
	return nil
}

// merge lays the command-line judge flags over the config file's; a flag wins when set.
func (j judgeConfig) merge(flags judgeConfig) judgeConfig {
	if flags.URL != "" {
		j.URL = flags.URL
	}
	if flags.Model != "" {
		j.Model = flags.Model
	}
	if flags.KeyEnv != "" {
		j.KeyEnv = flags.KeyEnv
	}
	if flags.CacheDir != "" {
		j.CacheDir = flags.CacheDir
	}
	if flags.TokenBudget != 0 {
		j.TokenBudget = flags.TokenBudget
	}
	if flags.MaxBatch != 0 {
		j.MaxBatch = flags.MaxBatch
	}
	if j.KeyEnv == "" {
		j.KeyEnv = defaultKeyEnv
	}
	return j
}
