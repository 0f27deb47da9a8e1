package cli

import (
	"fmt"

	"github.com/scorekit/scorekit/sdk"
)

// newJudge returns the judge described by c, or nil when c names no endpoint (judge
// scorers then return skipped with a reason that says how to configure one).
func newJudge(c judgeConfig) (sdk.Judge, error) {
	if c.URL == "" && c.Model == "" {
		return nil, nil
	}
	if c.URL == "" || c.Model == "" {
		return nil, fmt.Errorf("judge: need both --judge-url and --judge-model (or judge.url and judge.model in the config file)")
	}
	// TODO(broker): return broker.New(broker.Config{BaseURL: c.URL, Model: c.Model,
	// APIKey: os.Getenv(c.KeyEnv)}) once host/broker lands.
	return nil, fmt.Errorf("judge: this build has no judge broker yet; drop --judge-url to run the scorers that need none")
}
