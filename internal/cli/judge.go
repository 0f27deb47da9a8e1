package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/sdk"
)

// keyEnvNone is the --judge-key-env (and key_env) value of an endpoint that needs no API
// key: a local Ollama, vLLM or LM Studio. Any other value names a variable that must be
// set, so a typo or a forgotten export is a setup error, not a dozen 401s.
const keyEnvNone = "none"

// newJudge returns the judge broker c describes, or nil when c names no endpoint: scorers
// that need one then return skipped with a reason that says how to configure it. The key
// variable and the endpoint are checked by checkJudge, once it is known that a scorer will
// use the judge.
func newJudge(c judgeConfig) (*broker.Broker, error) {
	if c.URL == "" && c.Model == "" {
		return nil, nil
	}
	if c.URL == "" || c.Model == "" {
		return nil, fmt.Errorf("judge: need both --judge-url and --judge-model (or judge.url and judge.model in the config file)")
	}
	key := ""
	if !strings.EqualFold(c.KeyEnv, keyEnvNone) {
		key = os.Getenv(c.KeyEnv)
	}
	var endpoints []broker.Endpoint
	for _, ep := range c.Endpoints {
		epKey := ""
		if ep.KeyEnv != "" && !strings.EqualFold(ep.KeyEnv, keyEnvNone) {
			if epKey = os.Getenv(ep.KeyEnv); epKey == "" {
				return nil, fmt.Errorf("judge: endpoint %q: the API key variable %s (judge.endpoints key_env) is not set; export it, or drop key_env so that only tenants' own keys are used there", ep.Name, ep.KeyEnv)
			}
		}
		endpoints = append(endpoints, broker.Endpoint{Name: ep.Name, BaseURL: ep.URL, Model: ep.Model, Models: ep.Models, APIKey: epKey,
			TenantKeyRequired: ep.TenantKeyRequired, APIType: ep.APIType, APIVersion: ep.APIVersion})
	}
	b, err := broker.New(broker.Config{
		BaseURL:           c.URL,
		Model:             c.Model,
		Models:            c.Models,
		Endpoints:         endpoints,
		APIKey:            key,
		APIType:           c.APIType,
		APIVersion:        c.APIVersion,
		EmbeddingModel:    c.EmbeddingModel,
		CacheDir:          c.CacheDir,
		MaxConcurrency:    c.MaxConcurrency,
		RequestsPerSecond: c.RequestsPerSecond,
		TokenBudget:       c.TokenBudget,
		MaxBatch:          c.MaxBatch,
		MaxTokens:         c.MaxTokens,
		MaxRetries:        c.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("judge: %w", err)
	}
	return b, nil
}

// checkJudge proves the judge before the first run when one of the scorers (names; nil
// means every scorer in reg, as serve may run any) needs it: the key variable must be set
// unless it is "none", and the endpoint must answer the broker's preflight. A failure
// names the flag to fix; the command then stops with exit status 1 before any run is
// scored. Without a judge, or without a scorer that needs one, it does nothing and spends
// nothing.
func checkJudge(ctx context.Context, c judgeConfig, b *broker.Broker, reg *host.Registry, names []string) error {
	if b == nil || !needsJudge(reg, names) {
		return nil
	}
	if !strings.EqualFold(c.KeyEnv, keyEnvNone) && os.Getenv(c.KeyEnv) == "" {
		return fmt.Errorf("judge: the API key variable %s is not set; export it, name the variable that holds the key with "+
			"--judge-key-env VAR (judge.key_env in the config file), or pass --judge-key-env %s for an endpoint that needs no key "+
			"(a local Ollama, vLLM or LM Studio)", c.KeyEnv, keyEnvNone)
	}
	err := b.Preflight(ctx)
	var pe *broker.PreflightError
	if !errors.As(err, &pe) {
		if err != nil {
			return fmt.Errorf("judge preflight: %w", err)
		}
		return nil
	}
	fix := map[string]string{
		broker.SettingURL:   "--judge-url (judge.url in the config file)",
		broker.SettingModel: "--judge-model (judge.model in the config file)",
		broker.SettingKey:   fmt.Sprintf("--judge-key-env (judge.key_env; the key was read from $%s)", c.KeyEnv),
	}[pe.Setting]
	if pe.Setting == broker.SettingKey && strings.EqualFold(c.KeyEnv, keyEnvNone) {
		fix = "--judge-key-env: name the variable that holds the key (it is \"none\", so no key was sent)"
	}
	return fmt.Errorf("%w; fix %s", err, fix)
}

// needsJudge reports whether any of names (every scorer in reg when nil) declares the
// judge or embeddings capability. Unknown names are left to the caller's own check.
func needsJudge(reg *host.Registry, names []string) bool {
	if names == nil {
		names = reg.Names()
	}
	for _, n := range names {
		p, err := reg.Lookup(n)
		if err != nil {
			continue
		}
		if info := p.Info(); info.Has(sdk.CapJudge) || info.Has(sdk.CapEmbed) {
			return true
		}
	}
	return false
}

// judgeFlags adds the judge flags shared by score and serve.
func judgeFlags(f *pflag.FlagSet, j *judgeConfig) {
	f.StringVar(&j.URL, "judge-url", "", "OpenAI-compatible endpoint for scorers that need a judge (e.g. https://api.openai.com/v1); "+
		"checked with one models-list or 1-token request before the first run")
	f.StringVar(&j.Model, "judge-model", "", "model the judge asks (e.g. gpt-4o-mini)")
	f.StringVar(&j.KeyEnv, "judge-key-env", "", "environment variable holding the judge's API key (default "+defaultKeyEnv+
		`); it must be set, or "`+keyEnvNone+`" for an endpoint that needs no key (Ollama, vLLM, LM Studio)`)
	f.StringVar(&j.CacheDir, "judge-cache", "", "keep the judge's answers on disk in DIR so scoring the same runs again costs no calls")
	f.Int64Var(&j.TokenBudget, "judge-token-budget", 0, fmt.Sprintf("judge tokens (prompt + completion) one command may spend "+
		"(default %d per %.0fh; -1 is unlimited)", broker.DefaultTokenBudget, broker.DefaultBudgetWindow.Hours()))
	f.IntVar(&j.MaxBatch, "judge-max-batch", 0, fmt.Sprintf("judge requests one scorer call may send at once "+
		"(default %d; -1 is unlimited)", broker.DefaultMaxBatch))
}
