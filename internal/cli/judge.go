package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/sdk"
)

// newJudge returns the judge broker c describes and a func that closes it, or a nil judge
// when c names no endpoint: scorers that need one then return skipped with a reason that
// says how to configure it.
func newJudge(c judgeConfig) (sdk.Judge, func(), error) {
	if c.URL == "" && c.Model == "" {
		return nil, func() {}, nil
	}
	if c.URL == "" || c.Model == "" {
		return nil, nil, fmt.Errorf("judge: need both --judge-url and --judge-model (or judge.url and judge.model in the config file)")
	}
	b, err := broker.New(broker.Config{
		BaseURL:           c.URL,
		Model:             c.Model,
		APIKey:            os.Getenv(c.KeyEnv),
		APIType:           c.APIType,
		APIVersion:        c.APIVersion,
		EmbeddingModel:    c.EmbeddingModel,
		CacheDir:          c.CacheDir,
		MaxConcurrency:    c.MaxConcurrency,
		RequestsPerSecond: c.RequestsPerSecond,
		TokenBudget:       c.TokenBudget,
		MaxTokens:         c.MaxTokens,
		MaxRetries:        c.MaxRetries,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("judge: %w", err)
	}
	return b, func() { _ = b.Close() }, nil
}

// judgeFlags adds the judge flags shared by score and serve.
func judgeFlags(f *pflag.FlagSet, j *judgeConfig) {
	f.StringVar(&j.URL, "judge-url", "", "OpenAI-compatible endpoint for scorers that need a judge (e.g. https://api.openai.com/v1)")
	f.StringVar(&j.Model, "judge-model", "", "model the judge asks (e.g. gpt-4o-mini)")
	f.StringVar(&j.KeyEnv, "judge-key-env", "", "environment variable holding the judge's API key (default "+defaultKeyEnv+")")
	f.StringVar(&j.CacheDir, "judge-cache", "", "keep the judge's answers in DIR so scoring the same runs again costs no calls")
}
