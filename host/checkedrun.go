package host

import (
	"slices"
	"sync/atomic"

	"github.com/scorekit/scorekit/sdk"
)

// CheckedRun is a run the host has checked against the run contract, its context passages
// numbered: one that [DecodeCheckedRun] decoded or [CheckRun] checked. The pipeline trusts
// it: a scorer given one ([Scorer.ScoreChecked], [Scorer.ScoreCheckedBatch]) does not
// check it again, so a run that N scorers score is checked once, where it came in. A
// scorer given an [sdk.Run] ([Scorer.Score], [Scorer.ScoreBatch]) checks it each time and
// fails an invalid one with invalid_run, for callers that hand the host runs of their own.
//
// It holds the run it was made from without copying it: its slices and maps are the
// caller's, which must not change them while the run is scored. The zero value is the
// empty run.
type CheckedRun struct{ run sdk.Run }

// Run returns the run, as it was checked (see [CheckedRun] on sharing).
func (c CheckedRun) Run() sdk.Run { return c.run }

// CheckRun checks a run made in code (not read from JSON, which [DecodeCheckedRun] reads
// and checks in one go): it numbers context passages that have no ID, on a copy of the
// passages, and validates it ([sdk.Run.Validate]). The error wraps [sdk.ErrInvalidRun].
func CheckRun(r sdk.Run) (CheckedRun, error) {
	if err := checkRun(&r); err != nil {
		return CheckedRun{}, err
	}
	return CheckedRun{run: r}, nil
}

// DecodeCheckedRun is [DecodeRun], returning the run as checked: a scorer given it does
// not check it again.
func DecodeCheckedRun(line []byte) (CheckedRun, error) {
	r, err := DecodeRun(line)
	if err != nil {
		return CheckedRun{}, err
	}
	return CheckedRun{run: r}, nil
}

// runChecks counts the runs checked (checkRun), so that a test can hold the pipeline to
// one check per run however many scorers score it.
var runChecks atomic.Int64

// checkRun is the one check of a run, wherever it happens: decoding a line (DecodeRun),
// CheckRun, or a scorer given a run it cannot trust. It numbers context passages without
// an ID and validates the run. Passages may be shared (with the other scorers of the same
// run, or the caller), so numbering happens on a copy.
func checkRun(r *sdk.Run) error {
	runChecks.Add(1)
	for i := range r.Context {
		if r.Context[i].ID == "" {
			r.Context = slices.Clone(r.Context)
			r.NumberContext()
			break
		}
	}
	return r.Validate()
}
