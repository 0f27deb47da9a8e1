package service

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/scorekit/scorekit/internal/service/store"
)

// freshRun is a run stored by this import.
type freshRun struct {
	pk    int64
	id    string
	agent string
	at    time.Time
}

// sampled reports whether a run id falls in the sample of rate: the same id is always in
// or out, so re-sending a run never changes the choice.
func sampled(id string, rate float64) bool {
	if rate >= 1 {
		return true
	}
	if rate <= 0 {
		return false
	}
	h := sha256.Sum256([]byte(id))
	return float64(binary.BigEndian.Uint64(h[:8])>>11)/float64(1<<53) < rate
}

// evaluateOnArrival adds, in tx, the fresh runs each agent's policy takes to the agent's
// open arrival evaluation (opening one when there is none, or when it is full, old, or
// made under another policy), and returns the ids of the evaluations they joined.
//
// Imports that share a transaction (store.Store.InSharedTx) share what they learn of an
// agent (arrivals): its policy, and its open evaluation with the runs joined so far, are
// read by the first of them; the runs joined and the evaluation's counts are written once,
// before the commit (store.Tx.BeforeCommit). An import of one run then costs its own run's
// insert, not the five statements of joining it alone.
func (s *Service) evaluateOnArrival(ctx context.Context, tx *store.Tx, t store.Tenant, fresh []freshRun, warnings *[]string) ([]string, error) {
	byAgent := map[string][]freshRun{}
	var agents []string
	for _, f := range fresh {
		if _, ok := byAgent[f.agent]; !ok {
			agents = append(agents, f.agent)
		}
		byAgent[f.agent] = append(byAgent[f.agent], f)
	}
	// One order for every import: on PostgreSQL each agent's open evaluation is locked
	// until the import commits, and two imports taking two agents in opposite orders
	// would deadlock.
	slices.Sort(agents)
	var ids []string
	for _, a := range agents {
		key := arrivalKey{tenant: t.ID, agent: a}
		st, err := s.arrivalsOf(ctx, tx, t, key)
		if err != nil {
			return nil, err
		}
		if st.skip {
			continue
		}
		runs := byAgent[a]
		slices.SortStableFunc(runs, func(x, y freshRun) int { // in the order they happened
			if c := x.at.Compare(y.at); c != 0 {
				return c
			}
			return int(x.pk - y.pk)
		})
		var pks []int64
		for _, r := range runs {
			if sampled(r.id, st.rate) {
				pks = append(pks, r.pk)
			}
		}
		if len(pks) == 0 {
			continue
		}
		if st.why != "" {
			// The runs are stored all the same; the answer says why they were not evaluated.
			*warnings = append(*warnings, st.why)
			continue
		}
		joined, err := s.joinArrival(ctx, tx, t, key, st, pks)
		if err != nil {
			return nil, err
		}
		ids = append(ids, joined...)
	}
	return ids, nil
}

// arrivalKey is an agent of a tenant, the key of its arrivals in a transaction.
type arrivalKey struct {
	tenant int64
	agent  string
}

// arrivals is what a transaction's imports know of an agent's arrivals (store.Tx.Share):
// the policy, and the arrival evaluations its runs joined in the transaction with the runs
// not yet written. It is replaced, never changed in place: an import that fails has its
// part undone with its writes.
type arrivals struct {
	skip bool    // no policy, or one that takes no runs
	rate float64 // the policy's sample rate
	spec store.Spec
	why  string // the warning when the policy no longer holds
	// looked is set once the agent's open evaluation was looked for in the store; runs
	// then join the last of joined while it is open, and open another once it is not.
	looked bool
	joined []pendingArrival
}

// pendingArrival is an arrival evaluation runs joined in the transaction: ev with their
// counts, and the runs to add at positions from, from+1, ...
type pendingArrival struct {
	ev   store.Evaluation
	from int64
	pks  []int64
}

// arrivalsOf returns the transaction's arrivals of key, reading the agent's policy the
// first time.
func (s *Service) arrivalsOf(ctx context.Context, tx *store.Tx, t store.Tenant, key arrivalKey) (*arrivals, error) {
	if st, ok := tx.Shared(key).(*arrivals); ok {
		return st, nil
	}
	st := &arrivals{}
	p, err := tx.AgentPolicy(ctx, t.ID, key.agent)
	switch {
	case errors.Is(err, store.ErrNotFound):
		st.skip = true
	case err != nil:
		return nil, err
	case len(p.Scorers) == 0 || p.SampleRate <= 0:
		st.skip = true
	default:
		st.rate = p.SampleRate
		st.spec, err = s.spec(ctx, tx, t, p.Scorers, p.Config, p.Tiered)
		if err == nil {
			st.spec.Judge, err = s.judgeRoute(p.Judge)
		}
		if err != nil {
			st.why = fmt.Sprintf("agent %q: runs not evaluated on arrival: its policy no longer holds: %v", key.agent, err)
		}
	}
	tx.Share(key, st)
	return st, nil
}

// joinArrival adds pks to the agent's open arrival evaluation, opening another each time
// one fills, and returns the ids of the evaluations joined. The runs and counts are
// written before the transaction commits (writeArrival), except those of an evaluation
// that fills: it is written at once, so that the next can be opened.
func (s *Service) joinArrival(ctx context.Context, tx *store.Tx, t store.Tenant, key arrivalKey, st *arrivals, pks []int64) ([]string, error) {
	next := *st
	next.joined = slices.Clone(st.joined)
	var ids []string
	for len(pks) > 0 {
		last := len(next.joined) - 1
		if last < 0 || !next.joined[last].ev.Open {
			if !next.looked {
				next.looked = true
				ev, err := tx.OpenArrival(ctx, t.ID, key.agent)
				switch {
				case err == nil && s.joinable(ev, next.spec):
					next.joined = append(next.joined, pendingArrival{ev: ev, from: ev.Positions})
					continue
				case err == nil:
					// Its waiting runs keep their flush job (Engine.Arrived): closing loses none.
					if err := tx.CloseArrival(ctx, ev.PK); err != nil {
						return nil, err
					}
				case !errors.Is(err, store.ErrNotFound):
					return nil, err
				}
			}
			ev, err := tx.CreateArrival(ctx, t.ID, key.agent, next.spec)
			if errors.Is(err, store.ErrExists) {
				next.looked = false // another import opened one first (PostgreSQL): join it
				continue
			}
			if err != nil {
				return nil, err
			}
			next.joined = append(next.joined, pendingArrival{ev: ev, from: ev.Positions})
			continue
		}
		p := &next.joined[last]
		n := min(len(pks), s.opts.ArrivalMaxRuns-int(p.ev.Runs))
		p.pks = append(p.pks[:len(p.pks):len(p.pks)], pks[:n]...)
		p.ev.Runs += int64(n)
		p.ev.Positions += int64(n)
		p.ev.Expected = p.ev.Runs * int64(len(p.ev.Spec.Scorers))
		p.ev.Open = int(p.ev.Runs) < s.opts.ArrivalMaxRuns // full: the next runs open another
		if !slices.Contains(ids, p.ev.ID) {
			ids = append(ids, p.ev.ID)
		}
		if !p.ev.Open {
			if err := s.writeArrival(ctx, tx, p); err != nil {
				return nil, err
			}
		}
		pks = pks[n:]
	}
	tx.Share(key, &next)
	tx.BeforeCommit(key, func(ctx context.Context, tx *store.Tx) error {
		st, _ := tx.Shared(key).(*arrivals)
		for i := range st.joined {
			if err := s.writeArrival(ctx, tx, &st.joined[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return ids, nil
}

// writeArrival adds p's runs to its evaluation, hands them to jobs and stores its counts,
// and leaves p with no runs to write.
func (s *Service) writeArrival(ctx context.Context, tx *store.Tx, p *pendingArrival) error {
	if len(p.pks) == 0 {
		return nil
	}
	if err := tx.AddArrivalRuns(ctx, p.ev.PK, p.from, p.pks); err != nil {
		return err
	}
	if err := s.eng.Arrived(ctx, tx, p.ev); err != nil {
		return err
	}
	p.from, p.pks = p.ev.Positions, nil
	return nil
}

// joinable reports whether arriving runs under spec may join the open arrival
// evaluation ev: it has room, is younger than ArrivalMaxAge, and was made under the same
// scorers, versions, config and tiering.
func (s *Service) joinable(ev store.Evaluation, spec store.Spec) bool {
	if int(ev.Runs) >= s.opts.ArrivalMaxRuns || time.Since(ev.CreatedAt) >= s.opts.ArrivalMaxAge {
		return false
	}
	a, err1 := json.Marshal(ev.Spec)
	b, err2 := json.Marshal(spec)
	return err1 == nil && err2 == nil && sameJSON(a, b)
}
