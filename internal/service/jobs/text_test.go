package jobs_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// badText is a scorer whose reason and steps hold invalid UTF-8 as its Go strings carry
// it, as a WASM guest's binary-codec result does (its decoder keeps a string's bytes).
type badText struct{ reason string }

func (badText) Info() sdk.Info {
	return sdk.Info{Name: "bad_text", Version: "1.0.0", ABIVersion: sdk.ABIVersion, Range: sdk.Range{Min: 0, Max: 1}, Threshold: 0.5}
}

func (b badText) Score(context.Context, sdk.Call) (sdk.Result, error) {
	res := sdk.Scored(1, b.reason)
	res.Steps = []sdk.Step{{Name: "judge", Output: json.RawMessage(`"a scorer's own \ufffd escape"`)}}
	return res, nil
}

// A reason holding invalid UTF-8 is stored with U+FFFD in its place and flagged
// text_repaired on both backends; a scorer's own U+FFFD (escaped or not) is not flagged.
// Before, encoding/json replaced the bytes as it wrote the result, and nothing said so.
func TestInvalidUTF8InAReasonIsFlagged(t *testing.T) {
	for _, tt := range []struct {
		name, reason, stored string
		repaired             bool
	}{
		{"invalid UTF-8", "the guest says \xff\xfe here", "the guest says \uFFFD\uFFFD here", true},
		{"a U+FFFD of its own", "the guest says \uFFFD here", "the guest says \uFFFD here", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			backends(t, func(t *testing.T, dsn string) {
				reg := servicetest.Registry(t, nil)
				if err := reg.Register(host.Native(func() sdk.Scorer { return badText{tt.reason} }), false); err != nil {
					t.Fatal(err)
				}
				f := newFixture(t, dsn, servicetest.Options{Host: host.New(reg), Jobs: jobs.Options{Workers: 1}})
				pks := f.putRuns(t, "a", 2, true)
				rs := f.wait(t, f.evaluate(t, "a", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "bad_text"}}}))
				if len(rs) != 2 {
					t.Fatalf("%d results; want 2", len(rs))
				}
				for _, r := range rs {
					var res sdk.Result
					if err := json.Unmarshal(r.Body, &res); err != nil {
						t.Fatal(err)
					}
					if r.Status != "scored" || res.Reason != tt.stored || slices.Contains(res.Flags, jobs.FlagTextRepaired) != tt.repaired ||
						!strings.Contains(string(res.Steps[0].Output), `\ufffd escape`) {
						t.Fatalf("run %s: %s; want scored, reason %q, text_repaired %v", r.RunID, r.Body, tt.stored, tt.repaired)
					}
				}
			})
		})
	}
}
