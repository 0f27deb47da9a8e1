package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorekit/scorekit/host"
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

// runLimits are what a run of a tenant must meet to be stored.
type runLimits struct {
	// bytes caps the run's JSON: the tenant policy's max_run_bytes, else the service's
	// (Config.MaxRunBytes); policy says which.
	bytes  int
	policy bool
	// host are the host's run limits, which every scorer holds the run to: a run over one
	// would only ever be failed with limit_exceeded, so it is not stored.
	host host.RunLimits
}

func (s *Service) runLimits(t store.Tenant) runLimits {
	return runLimits{bytes: s.maxRunBytes(t), policy: t.Policy.MaxRunBytes > 0, host: s.opts.Host.RunLimits()}
}

// checkBytes checks the size of a run's JSON against the service's cap.
func (l runLimits) checkBytes(n int) error {
	if n <= l.bytes {
		return nil
	}
	setting := "the service's default; max_run_bytes in the tenant's policy sets another"
	if l.policy {
		setting = "max_run_bytes of the tenant's policy"
	}
	return fmt.Errorf("%w: the run is %d bytes, above the limit of %d bytes per run (%s); shorten it, or have the operator raise it",
		host.ErrLimitExceeded, n, l.bytes, setting)
}

// readRun reads a run's JSON (raw) as an import sends it: its size and nesting are
// checked before it is decoded (host.RunLimits.CheckJSON reads it once and stops at the
// limit, so a value nested millions of levels deep costs no decoding), text no database
// stores is replaced (store.CleanJSON: repaired says so), and it is decoded and checked
// against the run contract by the host's decoder (host.DecodeRun), the one every run's
// JSON goes through. It returns the JSON it read, repaired, for the run's id and body;
// id is the run's id where it was refused, for the answer.
func readRun(raw []byte, limit runLimits) (run sdk.Run, clean []byte, repaired bool, id string, err error) {
	if err := limit.checkBytes(len(raw)); err != nil {
		return run, raw, false, "", err
	}
	if err := limit.host.CheckJSON(raw); err != nil {
		return run, raw, false, runID(raw), err
	}
	// Text no database stores is replaced before anything reads the run, so its id, agent
	// and body are what is stored (store.CleanJSON).
	raw, repaired = store.CleanJSON(raw)
	run, err = host.DecodeRun(raw)
	if err != nil {
		return run, raw, repaired, run.ID, errors.New(strings.TrimPrefix(err.Error(), "run: "))
	}
	return run, raw, repaired, run.ID, nil
}

// checkRun checks one run, fills in its agent and id, redacts it with red (nil: nothing
// to redact), and returns it to store. Every stored run passes here, whether it came as
// JSON (an import: decoded here, readRun) or typed (the runs OTLP makes), and meets the
// same rules: the contract; the host's run limits (host.RunLimits: output, context and
// metadata's depth on the typed run, the run's size on its JSON) and the tenant's
// max_run_bytes, on the run's JSON as sent or, for a typed run, as stored; text no
// database stores replaced, and said (Repaired); an agent; an id (one derived from the
// content when it has none); redaction.
func (s *Service) checkRun(it *runItem, agent string, limit runLimits, red *redact.Redactor) (store.NewRun, error) {
	var nr store.NewRun
	run, raw := &it.run, it.raw
	if raw != nil {
		var err error
		it.run, raw, nr.Repaired, nr.ID, err = readRun(raw, limit)
		if err != nil {
			return nr, err
		}
	} else {
		// What decoding checks of a run's JSON, checked of the typed run. Its structure
		// is the contract's, so only metadata, which host.RunLimits.Check measures, can
		// nest deeper than ContractDepth.
		nr.ID = run.ID
		if err := run.Validate(); err != nil {
			return nr, err
		}
	}
	if err := limit.host.Check(run); err != nil {
		return nr, err
	}
	filled := run.Agent == "" || run.ID == ""
	switch {
	case run.Agent == "" && agent == "":
		return nr, errors.New(`missing "agent": every stored run names its agent (or import with --agent NAME, or ?agent=NAME)`)
	case run.Agent == "":
		run.Agent = agent
	case agent != "" && run.Agent != agent:
		return nr, fmt.Errorf("agent %q, but this import is for agent %q", run.Agent, agent)
	}
	if err := checkAgent(run.Agent); err != nil {
		return nr, err
	}
	if run.ID == "" {
		src := raw
		if src == nil {
			var err error
			if src, err = json.Marshal(run); err != nil {
				return nr, err
			}
		}
		h := sha256.Sum256(src)
		run.ID = "sha256-" + hex.EncodeToString(h[:12])
	}
	nr.ID, nr.Agent = run.ID, run.Agent
	if run.Time != nil {
		nr.Time = *run.Time
	}
	switch {
	case raw != nil && !filled:
		// The run as sent, unknown fields included: nothing needs adding.
		nr.Body = raw
	default:
		var err error
		if nr.Body, err = json.Marshal(run); err != nil {
			return nr, err
		}
	}
	if it.raw == nil {
		// A typed run's JSON is first made here: its size is checked as a sent run's is,
		// and text no database stores (a NUL, which encoding/json writes as \u0000) is
		// replaced as it is in one.
		var repaired bool
		nr.Body, repaired = store.CleanJSON(nr.Body)
		nr.Repaired = nr.Repaired || repaired
		if err := limit.checkBytes(len(nr.Body)); err != nil {
			return nr, err
		}
		if err := limit.host.CheckSize(int64(len(nr.Body))); err != nil {
			return nr, err
		}
	}
	// The id derived above is of the run as sent, so sending it again finds it; what is
	// stored (and read by every scorer and judge) is redacted.
	var err error
	nr.Body, nr.Redactions, err = red.JSON(nr.Body, redactKeep...)
	if err != nil {
		return nr, err
	}
	if len(it.redacted) > 0 {
		// What redaction replaced in the spans the run was made of, before it was made.
		if nr.Redactions == nil {
			nr.Redactions = map[string]int{}
		}
		for kind, n := range it.redacted {
			nr.Redactions[kind] += n
		}
	}
	return nr, nil
}

// runID reads the id of a run refused before it was decoded, for the answer (the runs
// OTLP makes carry their id first); "" when it has none, or none in the run's first
// runIDPrefix bytes, which bound what reading a hostile run costs.
func runID(raw []byte) string {
	const runIDPrefix = 4 << 10
	d := jsontext.NewDecoder(bytes.NewReader(raw[:min(len(raw), runIDPrefix)]))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return ""
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "id" {
			if d.SkipValue() != nil { // a value too deep for the decoder, or broken
				return ""
			}
			continue
		}
		v, err := d.ReadValue()
		if err != nil {
			return ""
		}
		switch v.Kind() {
		case '"':
			var id string
			if jsonv2.Unmarshal(v, &id) != nil {
				return ""
			}
			return id
		case '0':
			return string(v)
		}
		return ""
	}
	return ""
}

// redactKeep are the run fields redaction leaves as they are: they identify the run.
var redactKeep = []string{"id", "agent", "time"}

func checkAgent(a string) error {
	if a == "" || len(a) > 200 || strings.ContainsAny(a, "\x00\n\r/") {
		return invalid("agent %q: want 1-200 characters without '/', NUL or line breaks", a)
	}
	return nil
}

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
