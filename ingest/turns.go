package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// exchange is one model call as a log records it: the conversation sent and the message
// that came back, with what the log says about the call.
type exchange struct {
	record int    // the record it came from, for errors
	id     string // the record's or the response's id
	agent  string
	meta   map[string]any // the record's own metadata, kept as it is

	sent  []sdk.Turn // the conversation sent, system instructions first
	reply *sdk.Turn  // the assistant message that came back; nil when the call failed
	more  bool       // the reply asks for tool results: the turn goes on

	responseID, previousID string // the Responses API's chaining

	model      string
	finishKey  string // the metadata key the stop reason goes under
	finish     string
	status     string
	errMsg     string // the call's error, when it failed
	inTokens   float64
	outTokens  float64
	hasUsage   bool
	latencyMS  float64
	hasLatency bool
	when       *time.Time
	facts      map[string]string // more for metadata, kept when not empty (user, provider ...)
}

// pendingTurn is an agent turn being assembled from its rounds.
type pendingTurn struct {
	first  *exchange
	last   *exchange
	rounds int
	input  []sdk.Turn
	output []sdk.Turn
	key    string // what the next round's conversation starts with, while open
	inTok  float64
	outTok float64
	usage  bool
	lat    float64
	hasLat bool
}

// joiner assembles rounds into turns: a round whose conversation extends an open turn's
// (its sent turns plus its reply, then tool results only) continues it; any other round
// starts a turn. A turn is emitted when a round ends it (a reply that asks for no tool);
// turns still open at the end are emitted as they stand.
type joiner struct {
	o      *Options
	emit   func(sdk.Run) error
	open   map[string]*pendingTurn // by key
	byResp map[string]*pendingTurn // by the last round's response id
	order  []*pendingTurn          // open turns, oldest first
	// onTurn, when set, takes each turn instead of emit (a run's span gathers its turns).
	onTurn func(*pendingTurn) error
}

func newJoiner(o *Options, emit func(sdk.Run) error) *joiner {
	return &joiner{o: o, emit: emit, open: map[string]*pendingTurn{}, byResp: map[string]*pendingTurn{}}
}

// add takes one round.
func (j *joiner) add(ex *exchange) error {
	t, extra := j.continues(ex)
	if t == nil {
		t = &pendingTurn{first: ex}
		t.input, t.output = splitOutput(ex.sent)
	} else {
		j.close(t)
		t.output = append(t.output, extra...)
	}
	t.last = ex
	t.rounds++
	if ex.reply != nil {
		t.output = append(t.output, *ex.reply)
	}
	if ex.hasUsage {
		t.inTok, t.outTok, t.usage = t.inTok+ex.inTokens, t.outTok+ex.outTokens, true
	}
	if ex.hasLatency {
		t.lat, t.hasLat = t.lat+ex.latencyMS, true
	}
	if !ex.more || ex.reply == nil {
		return j.emitTurn(t)
	}
	t.key = conversationKey(append(append([]sdk.Turn(nil), t.input...), t.output...))
	j.open[t.key] = t
	if ex.responseID != "" {
		j.byResp[ex.responseID] = t
	}
	j.order = append(j.order, t)
	return nil
}

// continues finds the open turn ex continues and the turns ex adds to it (tool results),
// or nil when ex starts a turn.
func (j *joiner) continues(ex *exchange) (*pendingTurn, []sdk.Turn) {
	if ex.previousID != "" {
		// The client sends only what is new, and its instructions again.
		var extra []sdk.Turn
		for _, t := range ex.sent {
			if t.Role != "system" && t.Role != "developer" {
				extra = append(extra, t)
			}
		}
		if t := j.byResp[ex.previousID]; t != nil && onlyToolTurns(extra) {
			return t, extra
		}
	}
	if len(j.open) == 0 {
		return nil, nil
	}
	prefix := keyer{}
	keys := make([]string, len(ex.sent)+1)
	keys[0] = prefix.sum()
	for i, turn := range ex.sent {
		prefix.add(turn)
		keys[i+1] = prefix.sum()
	}
	for l := len(ex.sent); l > 0; l-- {
		if t := j.open[keys[l]]; t != nil {
			if onlyToolTurns(ex.sent[l:]) {
				return t, ex.sent[l:]
			}
			return nil, nil // the user spoke again: a new turn
		}
	}
	return nil, nil
}

// close takes t out of the open turns.
func (j *joiner) close(t *pendingTurn) {
	delete(j.open, t.key)
	if id := t.last.responseID; id != "" && j.byResp[id] == t {
		delete(j.byResp, id)
	}
	for i, o := range j.order {
		if o == t {
			j.order = append(j.order[:i], j.order[i+1:]...)
			break
		}
	}
}

// finish emits the turns still open, oldest first: rounds that asked for tools and whose
// next round the log does not hold.
func (j *joiner) finish() error {
	rest := append([]*pendingTurn(nil), j.order...)
	sort.SliceStable(rest, func(a, b int) bool { return rest[a].first.record < rest[b].first.record })
	for _, t := range rest {
		j.close(t)
		if err := j.emitTurn(t); err != nil {
			return err
		}
	}
	return nil
}

func (j *joiner) emitTurn(t *pendingTurn) error {
	if j.onTurn != nil {
		return j.onTurn(t)
	}
	run, err := t.run(j.o.Agent)
	if err != nil {
		return j.o.report(t.first.record, err)
	}
	return j.emit(run)
}

// run builds the turn's run: the first round's id, the last round's model and stop
// reason, usage and latency summed over the rounds.
func (t *pendingTurn) run(agent string) (sdk.Run, error) {
	run, err := runFromTurns(t.input, t.output)
	if err != nil {
		return sdk.Run{}, err
	}
	first, last := t.first, t.last
	run.ID = first.id
	run.Agent = firstNonEmpty(first.agent, agent)
	run.Time = last.when
	meta := map[string]any{}
	for k, v := range first.meta {
		meta[k] = v
	}
	for k, v := range last.facts {
		setIf(meta, k, v)
	}
	setIf(meta, "model", last.model)
	key := firstNonEmpty(last.finishKey, "finish_reason")
	setIf(meta, key, last.finish)
	setIf(meta, "status", last.status)
	setIf(meta, "error", last.errMsg)
	if t.usage {
		meta["input_tokens"], meta["output_tokens"] = t.inTok, t.outTok
	}
	if t.hasLat {
		meta["latency_ms"] = t.lat
	}
	if t.rounds > 1 {
		meta["rounds"] = float64(t.rounds)
	}
	if len(meta) > 0 {
		run.Metadata = meta
	}
	return run, nil
}

// onlyToolTurns reports whether every turn is a tool result.
func onlyToolTurns(ts []sdk.Turn) bool {
	for _, t := range ts {
		if t.Role != "tool" && t.Role != "function" {
			return false
		}
	}
	return true
}

// conversationKey identifies a conversation by its turns, so that the round that extends
// it finds it whatever the log's formatting.
func conversationKey(ts []sdk.Turn) string {
	var k keyer
	for _, t := range ts {
		k.add(t)
	}
	return k.sum()
}

// keyer hashes turns one after another; sum is the key of the turns added so far.
type keyer struct{ h [32]byte }

func (k *keyer) add(t sdk.Turn) {
	// A client may re-encode the arguments it sends back ({"a": 1} for {"a":1}).
	if len(t.ToolCalls) > 0 {
		calls := make([]sdk.ToolCall, len(t.ToolCalls))
		for i, c := range t.ToolCalls {
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(c.Arguments)) == nil {
				c.Arguments = buf.String()
			}
			calls[i] = c
		}
		t.ToolCalls = calls
	}
	b, _ := json.Marshal(t) // a Turn always encodes
	s := sha256.New()
	s.Write(k.h[:])
	s.Write(b)
	copy(k.h[:], s.Sum(nil))
}

func (k *keyer) sum() string { return string(k.h[:]) }

// splitOutput splits a conversation into what the agent was given and what it answered:
// the agent's turns (assistant and tool messages) after the last user turn. Other turns
// there (a system message a framework injected) stay with the input.
func splitOutput(turns []sdk.Turn) (input, output []sdk.Turn) {
	last := -1
	for i, t := range turns {
		if t.Role == "user" {
			last = i
		}
	}
	input = append(input, turns[:last+1]...)
	for _, t := range turns[last+1:] {
		switch t.Role {
		case "assistant", "tool", "function":
			output = append(output, t)
		default:
			input = append(input, t)
		}
	}
	return input, output
}

// runFromTurns builds a run from its input and output turns with the same rules as
// sdk.Run.UnmarshalJSON (sdk.Run.SetTurns).
func runFromTurns(input, output []sdk.Turn) (sdk.Run, error) {
	var r sdk.Run
	err := r.SetTurns(input, output)
	return r, err
}

func setIf(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// textOf reads the text of a content value as logs write it: a string, a list of parts
// with text, or an object that wraps it ({"text": ...}, {"value": ...}, {"content": ...},
// a refusal).
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, p := range x {
			if s := textOf(p); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		for _, k := range [...]string{"text", "value", "content", "refusal"} {
			if s := textOf(x[k]); s != "" {
				return s
			}
		}
	}
	return ""
}

// jsonText returns a value as the JSON text a run keeps for tool arguments and results:
// a string as it is, anything else encoded.
func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.RawMessage:
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s
		}
		if string(x) == "null" {
			return ""
		}
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
