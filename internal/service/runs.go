package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// Import outcomes of one run.
const (
	RunStored    = "stored"
	RunDuplicate = "duplicate" // the tenant had a run with this id already; nothing changed
	RunRejected  = "rejected"
	// RunDeleted: the tenant deleted a run with this id (within store.TombstoneTTL); it
	// is not stored again.
	RunDeleted = "deleted"
)

// ImportedRun says what happened to one run of an import.
type ImportedRun struct {
	// Line is the run's line (JSONL) or its 1-based position (JSON array); 1 for a
	// single run.
	Line   int    `json:"line"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status" enum:"stored,duplicate,rejected,deleted"`
	// Error says why a rejected run was rejected and what to fix.
	Error string `json:"error,omitempty"`
	// Repaired is true when the run held text no database stores (a NUL, invalid UTF-8,
	// a lone surrogate) and was stored with U+FFFD in its place; Warning says so.
	Repaired bool `json:"repaired,omitempty"`
	// ContentDiffers is true for a duplicate whose content differs from the run the tenant
	// has (or sent earlier in the same import) under its id; that run is kept, and
	// Warning says so.
	ContentDiffers bool `json:"content_differs,omitempty"`
	// Warning says what was stored other than as sent, or not stored although it differs.
	Warning string `json:"warning,omitempty"`
	// Redactions counts, by kind, what the tenant's redaction rules replaced in the run
	// before it was stored (email, phone, card, secret, or a pattern's name).
	Redactions map[string]int `json:"redactions,omitempty"`
}

// ImportResult is the answer to an import.
type ImportResult struct {
	Stored     int `json:"stored"`
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
	// Deleted counts runs not stored because the tenant deleted a run with their id.
	Deleted int `json:"deleted"`
	// Repaired counts stored runs whose text was repaired (ImportedRun.Repaired).
	Repaired int `json:"repaired"`
	// Redacted counts stored runs in which redaction replaced something
	// (ImportedRun.Redactions).
	Redacted int `json:"redacted"`
	// ContentDiffers counts duplicates whose content differs (ImportedRun.ContentDiffers).
	ContentDiffers int           `json:"content_differs"`
	Runs           []ImportedRun `json:"runs"`
	// Evaluations lists the evaluations started on arrival by agent policies.
	Evaluations []string `json:"evaluations,omitempty"`
	// Warnings say what was stored but not done (an agent policy that no longer holds).
	Warnings []string `json:"warnings,omitempty"`
}

// ImportOptions say how to read an import.
type ImportOptions struct {
	// Agent is given to runs that name none; a run that names another agent is rejected.
	// Optional: without it every run must name its agent.
	Agent string
}

// ImportRuns stores runs from body: one run, a JSON array of runs, or JSONL (one run a
// line; blank lines ignored). Each run is validated against the run contract and the run
// limits (the host's host.RunLimits, which every scorer holds a run to, and the service's
// cap on a run's JSON, max_run_bytes), and must name its agent; a run without an id gets
// one derived from its content, so sending it again stores it once. A bad run is rejected
// with its line and the reason, and the good ones are kept. Runs stored and their joining
// the arrival evaluations of their agents' policies are written in one transaction. The
// runs, once decoded, are stored as the runs OTLP makes are (storeRuns).
func (s *Service) ImportRuns(ctx context.Context, t store.Tenant, body []byte, o ImportOptions) (ImportResult, error) {
	items, err := splitRuns(body)
	if err != nil {
		return ImportResult{}, err
	}
	runs := make([]runItem, len(items))
	for i, it := range items {
		runs[i] = runItem{line: it.line, raw: it.raw}
	}
	return s.storeRuns(ctx, t, runs, storeOptions{agent: o.Agent})
}

// runItem is one run on its way to the store: its JSON as sent (raw: an import, decoded
// where it is checked), or the run made typed (raw nil: the runs OTLP makes, which never
// were JSON).
type runItem struct {
	// line is the run's line (JSONL), its 1-based position (a JSON array, the runs of an
	// OTLP request), or 1 for a single run.
	line int
	raw  []byte
	run  sdk.Run
	// redacted counts what redaction replaced before the run was made: in the spans and
	// log records an OTLP run is made of, redacted when they were kept.
	redacted redact.Counts
}

// storeOptions say how storeRuns stores runs.
type storeOptions struct {
	// agent is ImportOptions.Agent.
	agent string
	// inTx, when set, runs in the transaction that stores the runs, after them, with
	// what became of each: the OTLP path writes what it keeps of the runs' spans there,
	// so the runs and the spans they consumed are committed together.
	inTx func(ctx context.Context, tx *store.Tx, res *ImportResult) error
}

// storeRuns stores runs for tenant t: the one path of every stored run (POST /v1/runs, a
// file, the runs OTLP makes). Each run is checked (checkRun: the contract, the host's run
// limits, the tenant's max_run_bytes, its agent), given an id when it has none, and
// redacted with the tenant's rules; a bad run is rejected with the reason and the good
// ones are kept. A run whose id came earlier in the same call, or that the tenant has, is
// a duplicate; one the tenant deleted is not stored again (RunDeleted). Runs stored and
// their joining the arrival evaluations of their agents' policies are written in one
// transaction.
func (s *Service) storeRuns(ctx context.Context, t store.Tenant, items []runItem, o storeOptions) (ImportResult, error) {
	if o.agent != "" {
		if err := checkAgent(o.agent); err != nil {
			return ImportResult{}, err
		}
	}
	res := ImportResult{Runs: make([]ImportedRun, len(items))}
	var (
		batch []store.NewRun
		where []int // index in res.Runs of each batch entry
		ids   = map[string]int{}
		limit = s.runLimits(t)
	)
	red, err := s.redactor(t)
	if err != nil {
		return ImportResult{}, err
	}
	checked := s.checkAll(items, o.agent, limit, red)
	for i, it := range items {
		ir := &res.Runs[i]
		ir.Line = it.line
		nr, err := checked[i].run, checked[i].err
		ir.ID = nr.ID
		if err != nil {
			ir.Status, ir.Error = RunRejected, err.Error()
			res.Rejected++
			continue
		}
		if prev, ok := ids[nr.ID]; ok {
			ir.Status, ir.Error = RunDuplicate, fmt.Sprintf("same id as line %d of this import", res.Runs[prev].Line)
			res.Duplicates++
			if !sameJSON(checked[prev].run.Body, nr.Body) {
				res.differs(ir, fmt.Sprintf("line %d of this import", res.Runs[prev].Line))
			}
			continue
		}
		ids[nr.ID] = i
		if nr.Repaired {
			ir.Repaired, ir.Warning = true, repairedWarning
			res.Repaired++
		}
		batch = append(batch, nr)
		where = append(where, i)
	}
	// Concurrent imports share a commit on SQLite (store.Store.InSharedTx); each still
	// learns its own outcome.
	err = s.st.InSharedTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var pks []int64
		var deleted []bool
		if len(batch) > 0 {
			var err error
			if pks, deleted, err = tx.PutRunsDeleted(ctx, t.ID, batch); err != nil {
				return err
			}
		}
		var (
			fresh []freshRun
			dups  []int // index in batch of each run the tenant had
		)
		for j, pk := range pks {
			ir := &res.Runs[where[j]]
			if deleted[j] {
				ir.Status, ir.Error = RunDeleted, "a run with this id was deleted; it is not stored again (send it under a new id to store it)"
				res.Deleted++
				if ir.Repaired {
					ir.Repaired, ir.Warning = false, ""
					res.Repaired--
				}
				continue
			}
			if pk == 0 {
				ir.Status = RunDuplicate
				res.Duplicates++
				if ir.Repaired {
					ir.Repaired, ir.Warning = false, ""
					res.Repaired--
				}
				dups = append(dups, j)
				continue
			}
			ir.Status = RunStored
			res.Stored++
			if r := batch[j].Redactions; len(r) > 0 {
				ir.Redactions = r
				res.Redacted++
			}
			fresh = append(fresh, freshRun{pk: pk, id: batch[j].ID, agent: batch[j].Agent, at: batch[j].Time})
		}
		if err := s.compareDuplicates(ctx, tx, t, batch, dups, func(j int) *ImportedRun { return &res.Runs[where[j]] }, &res); err != nil {
			return err
		}
		var err error
		if res.Evaluations, err = s.evaluateOnArrival(ctx, tx, t, fresh, &res.Warnings); err != nil {
			return err
		}
		if o.inTx != nil {
			return o.inTx(ctx, tx, &res)
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	for _, ir := range res.Runs {
		s.opts.Jobs.Telemetry.Redacted(ir.Redactions)
	}
	return res, nil
}

// repairedWarning is the warning of a run stored with its text repaired.
const repairedWarning = "the run held text no database stores (a NUL, invalid UTF-8 or a lone UTF-16 surrogate); " +
	"it was stored with U+FFFD in its place and flagged repaired: fix the sender to keep the original text"

// differs marks ir, a duplicate, as differing from the run kept under its id.
func (res *ImportResult) differs(ir *ImportedRun, kept string) {
	ir.ContentDiffers = true
	ir.Warning = fmt.Sprintf("the run has other content than %s with id %q, which is kept unchanged; "+
		"send it under a new id to store it too", kept, ir.ID)
	res.ContentDiffers++
}

// compareDuplicates says which of the batch's runs at dups, whose ids the tenant had
// already, differ from the run stored under their id.
func (s *Service) compareDuplicates(ctx context.Context, tx *store.Tx, t store.Tenant, batch []store.NewRun, dups []int, at func(int) *ImportedRun, res *ImportResult) error {
	if len(dups) == 0 {
		return nil
	}
	ids := make([]string, len(dups))
	for k, j := range dups {
		ids[k] = batch[j].ID
	}
	stored, err := tx.RunsByID(ctx, t.ID, ids)
	if err != nil {
		return err
	}
	bodies := make(map[string]json.RawMessage, len(stored))
	for _, r := range stored {
		bodies[r.ID] = r.Body
	}
	for _, j := range dups {
		if b, ok := bodies[batch[j].ID]; ok && !sameJSON(b, batch[j].Body) {
			res.differs(at(j), "the stored run")
		}
	}
	return nil
}

// sameJSON reports whether a and b hold the same JSON value: PostgreSQL keeps JSON in a
// form of its own (key order, spacing), so bytes alone do not tell.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

type checkedRun struct {
	run store.NewRun
	err error
}

// checkAll checks items on every CPU (checkRun): decoding and validating a run's JSON
// against the run contract is most of an import's cost.
func (s *Service) checkAll(items []runItem, agent string, limit runLimits, red *redact.Redactor) []checkedRun {
	out := make([]checkedRun, len(items))
	workers := min(runtime.GOMAXPROCS(0), len(items)/64+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(items); i += workers {
				out[i].run, out[i].err = s.checkRun(&items[i], agent, limit, red)
			}
		}()
	}
	wg.Wait()
	return out
}

// item is one run's JSON and where it was.
type item struct {
	line int
	raw  []byte
}

// splitRuns finds the runs in body: a JSON array, one JSON object, or JSONL.
func splitRuns(body []byte) ([]item, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, invalid("the body has no runs: send one run, a JSON array of runs, or JSONL (one run a line)")
	}
	if trimmed[0] == '[' {
		var raws []json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&raws); err != nil {
			return nil, invalid("the body starts a JSON array but is not valid JSON: %s", jsonError(err))
		}
		if dec.More() || dec.InputOffset() != int64(len(trimmed)) {
			return nil, invalid("data after the JSON array: send one array, or JSONL (one run a line)")
		}
		out := make([]item, len(raws))
		for i, r := range raws {
			out[i] = item{line: i + 1, raw: r}
		}
		return out, nil
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		return []item{{line: 1, raw: trimmed}}, nil
	}
	var out []item
	for i, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		out = append(out, item{line: i + 1, raw: line})
	}
	return out, nil
}

// jsonError says where and what without Go type names.
func jsonError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: want %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number"
}
