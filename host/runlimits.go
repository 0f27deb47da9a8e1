package host

import (
	"bytes"
	"fmt"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// RunLimits bound the size of one run. They are part of the contract: the host checks
// them before any scorer sees a run, the same way whatever runtime the scorer runs in, and
// a run over a limit is a failed result with code limit_exceeded while the other runs go
// on. Zero fields take the defaults (DefaultMaxRunBytes ...), which real runs never reach:
// they are set well above what a model produces or a retriever returns, so that only
// runaway or hostile input meets them.
//
// A host sets its own with [WithRunLimits]; a tenant's (OpenOptions.RunLimits) can only
// lower them. The JSON names are the keys of the command line's config file
// ("run_limits") and of a tenant's policy.
type RunLimits struct {
	// MaxRunBytes bounds the size of a run: its JSON where it arrives as JSON (a dataset
	// line, a request body), else the bytes of its text (every string, metadata keys
	// included, and one byte for every other value). Optional. Default is
	// [DefaultMaxRunBytes].
	MaxRunBytes int `json:"max_run_bytes,omitempty"`
	// MaxOutputBytes bounds the output. Optional. Default is [DefaultMaxOutputBytes].
	MaxOutputBytes int `json:"max_output_bytes,omitempty"`
	// MaxContextBytes bounds the text of all context passages together. Optional. Default
	// is [DefaultMaxContextBytes].
	MaxContextBytes int `json:"max_context_bytes,omitempty"`
	// MaxPassages bounds the number of context passages. Optional. Default is
	// [DefaultMaxPassages].
	MaxPassages int `json:"max_passages,omitempty"`
	// MaxMetadataDepth bounds how deep metadata nests: {"a": 1} is 1 deep, {"a": {"b": [1]}}
	// is 3. Optional. Default is [DefaultMaxMetadataDepth].
	MaxMetadataDepth int `json:"max_metadata_depth,omitempty"`
}

// The default run limits. The largest model outputs are a few hundred KB (128k tokens);
// retrieved context rarely passes a few hundred KB and a long-context window of a million
// tokens is about 4 MB; real metadata nests a handful of levels.
const (
	DefaultMaxRunBytes      = 8 << 20
	DefaultMaxOutputBytes   = 1 << 20
	DefaultMaxContextBytes  = 4 << 20
	DefaultMaxPassages      = 1000
	DefaultMaxMetadataDepth = 32
)

// fields lists l's fields with their JSON names and defaults.
func (l *RunLimits) fields() [5]limitField {
	return [5]limitField{
		{"max_run_bytes", &l.MaxRunBytes, DefaultMaxRunBytes},
		{"max_output_bytes", &l.MaxOutputBytes, DefaultMaxOutputBytes},
		{"max_context_bytes", &l.MaxContextBytes, DefaultMaxContextBytes},
		{"max_passages", &l.MaxPassages, DefaultMaxPassages},
		{"max_metadata_depth", &l.MaxMetadataDepth, DefaultMaxMetadataDepth},
	}
}

// WithDefaults returns l with every zero field set to its default.
func (l RunLimits) WithDefaults() RunLimits {
	out := l
	for _, f := range out.fields() {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return out
}

// Lower returns l with each field lowered to t's where t sets a smaller, positive value: a
// tenant's limits applied to the host's.
func (l RunLimits) Lower(t RunLimits) RunLimits {
	out := l
	of, tf := out.fields(), t.fields()
	lowerFields(of[:], tf[:])
	return out
}

// Validate reports a negative field, naming it.
func (l RunLimits) Validate() error {
	for _, f := range l.fields() {
		if *f.v < 0 {
			return fmt.Errorf("run_limits.%s is %d: want a positive number, or 0 for the default (%d)", f.name, *f.v, f.def)
		}
	}
	return nil
}

// CheckSize checks the size of a run's JSON, before it is decoded, against MaxRunBytes
// (its default when zero). The error wraps [ErrLimitExceeded].
func (l RunLimits) CheckSize(n int64) error {
	l = l.WithDefaults()
	if n > int64(l.MaxRunBytes) {
		return l.exceeded("the run", "is "+textkit.FormatBytes(n), "max_run_bytes", l.MaxRunBytes, true)
	}
	return nil
}

// contractDepth is how many levels the run contract's own structure takes above a
// free-form value: a tool call's arguments in a conversation sit at
// conversation[turn{tool_calls[call{function{arguments. [RunLimits.CheckJSON] lets a
// field other than metadata nest this much deeper than MaxMetadataDepth.
const contractDepth = 5

// CheckJSON checks a run's JSON before it is decoded: its size against MaxRunBytes, and
// how deep each of its fields nests: metadata against MaxMetadataDepth ({"metadata":
// {"a": 1}} is 1 deep, as [RunLimits.Check] counts), any other field (a conversation, a
// tool call's arguments or result, a field the contract does not name) against
// MaxMetadataDepth + 5, the levels the contract's own structure takes above a free-form
// value (contractDepth). Zero fields take the defaults. The error wraps
// [ErrLimitExceeded] and names the field and the setting.
//
// It reads raw once, without decoding it: it stops at the first level past a limit and
// allocates nothing, so a document nested millions of levels deep costs no more than
// the limit, where a decoder would recurse or keep a stack for every level (Go's
// encoding/json and jsontext refuse past 10,000 levels, after reading that far). It does
// not validate raw: decoding it does that after.
func (l RunLimits) CheckJSON(raw []byte) error {
	l = l.WithDefaults()
	if err := l.CheckSize(int64(len(raw))); err != nil {
		return err
	}
	field, depth, limit := jsonNesting(raw, l.MaxMetadataDepth)
	if field == "" {
		return nil
	}
	if field == "metadata" {
		return l.exceeded("metadata", fmt.Sprintf("nests %d or more levels deep", depth), "max_metadata_depth", limit, false)
	}
	return fmt.Errorf("%w: %q nests %d or more levels deep, above the limit of %d (run_limits.max_metadata_depth, %d, plus the %d levels the run contract takes); "+
		"shorten it, or raise the limit in the config or the tenant's policy", ErrLimitExceeded, field, depth, limit, l.MaxMetadataDepth, contractDepth)
}

// jsonNesting scans the JSON object raw for the first member whose value nests deeper
// than its limit (metadata's maxMeta, any other's maxMeta+contractDepth) and returns its
// name, the depth it reached and the limit; field is "" when none does. A value's depth
// counts its objects and arrays: 1 for {"a": 1}, 0 for a string.
func jsonNesting(raw []byte, maxMeta int) (field string, depth, limit int) {
	level := 0             // objects and arrays open at i; the run itself is level 1
	var key, member []byte // the last name read in the run's object; the member being read
	name := false          // the next string in the run's object is a member's name
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			start := i + 1
			for i = start; ; i++ { // to the closing quote: one not escaped by a backslash
				j := bytes.IndexByte(raw[i:], '"')
				if j < 0 {
					return "", 0, 0 // unterminated: the decoder says so
				}
				i += j
				k := i
				for k > start && raw[k-1] == '\\' {
					k--
				}
				if (i-k)%2 == 0 {
					break
				}
			}
			if level == 1 && name {
				key, name = raw[start:i], false
			}
		case ':':
			if level == 1 {
				member = key
			}
		case ',':
			if level == 1 {
				name = true
			}
		case '{', '[':
			level++
			if level == 1 {
				name = raw[i] == '{'
				continue
			}
			limit = maxMeta + contractDepth
			if string(member) == "metadata" {
				limit = maxMeta
			}
			if level-1 > limit {
				return string(member), level - 1, limit
			}
		case '}', ']':
			level--
		}
	}
	return "", 0, 0
}

// Check checks a decoded run against l (defaults for zero fields). The error wraps
// [ErrLimitExceeded] and names the part of the run, its size, the limit and the setting
// that raises it.
func (l RunLimits) Check(r *sdk.Run) error {
	l = l.WithDefaults()
	if n := len(r.Output); n > l.MaxOutputBytes {
		return l.exceeded("output", "is "+textkit.FormatBytes(int64(n)), "max_output_bytes", l.MaxOutputBytes, true)
	}
	if n := len(r.Context); n > l.MaxPassages {
		return l.exceeded("context", fmt.Sprintf("has %d passages", n), "max_passages", l.MaxPassages, false)
	}
	ctx := 0
	for i := range r.Context {
		ctx += len(r.Context[i].Text)
	}
	if ctx > l.MaxContextBytes {
		return l.exceeded("context", "is "+textkit.FormatBytes(int64(ctx))+" of text", "max_context_bytes", l.MaxContextBytes, true)
	}
	size := runTextBytes(r) + ctx
	depth := 0
	if r.Metadata != nil {
		var n int
		depth, n = measure(r.Metadata, 1, l.MaxMetadataDepth)
		size += n
	}
	if depth > l.MaxMetadataDepth {
		return l.exceeded("metadata", fmt.Sprintf("nests %d or more levels deep", depth), "max_metadata_depth", l.MaxMetadataDepth, false)
	}
	if size > l.MaxRunBytes {
		return l.exceeded("the run", "is "+textkit.FormatBytes(int64(size)), "max_run_bytes", l.MaxRunBytes, true)
	}
	return nil
}

func (l RunLimits) exceeded(what, is, field string, limit int, bytes bool) error {
	lim := fmt.Sprint(limit)
	if bytes {
		lim = textkit.FormatBytes(int64(limit))
	}
	return fmt.Errorf("%w: %s %s, above the limit of %s (run_limits.%s); shorten it, or raise the limit in the config or the tenant's policy",
		ErrLimitExceeded, what, is, lim, field)
}

// runTextBytes counts the text of a run outside its context and metadata.
func runTextBytes(r *sdk.Run) int {
	n := len(r.ID) + len(r.Agent) + len(r.Input) + len(r.Output) + len(r.Expected)
	for i := range r.Context {
		n += len(r.Context[i].ID)
	}
	for i := range r.Conversation {
		n += turnBytes(&r.Conversation[i])
	}
	for i := range r.ToolCalls {
		n += toolCallBytes(&r.ToolCalls[i])
	}
	for _, c := range r.ExpectedToolCalls {
		n += len(c.Name) + len(c.Arguments) + len(c.ArgumentsSchema)
	}
	return n
}

func turnBytes(t *sdk.Turn) int {
	n := len(t.Role) + len(t.Content) + len(t.Name) + len(t.ToolCallID)
	for i := range t.ToolCalls {
		n += toolCallBytes(&t.ToolCalls[i])
	}
	return n
}

func toolCallBytes(c *sdk.ToolCall) int {
	return len(c.ID) + len(c.Name) + len(c.Arguments) + len(c.Result)
}

// measure returns how deep v nests (an object or array at level is that deep) and how many
// bytes of text it holds: strings and keys by length, other values one byte each. It stops
// descending below limit+1 levels, so a hostile document costs no more than the limit.
func measure(v any, level, limit int) (depth, size int) {
	switch x := v.(type) {
	case string:
		return level - 1, len(x)
	case map[string]any:
		depth = level
		if level > limit {
			return depth, 0
		}
		for k, e := range x {
			d, n := measure(e, level+1, limit)
			depth, size = max(depth, d), size+len(k)+n
		}
		return depth, size
	case []any:
		depth = level
		if level > limit {
			return depth, 0
		}
		for _, e := range x {
			d, n := measure(e, level+1, limit)
			depth, size = max(depth, d), size+n
		}
		return depth, size
	}
	return level - 1, 1
}
