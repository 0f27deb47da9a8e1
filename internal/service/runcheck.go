package service

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

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
