package cli

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/scorekit/scorekit/sdk"
)

// appendRecord appends one `--format jsonl` line: one (run, scorer) pair. The keys up to
// telemetry are always present so that consumers need no existence checks; score and
// passed are null unless the status is scored. skipped_dimensions, adjustments,
// suggestions and citation_audit appear when set because they explain a score (a
// dimension left out, a clamp the host applied and the audit behind it, what a judge
// would improve); steps hold whole prompts and appear only with --steps.
//
// It writes what encoding/json would write for the same fields (the same string escapes,
// numbers and map order), without reflection: at the pre-screen's speed, encoding results
// through encoding/json was a tenth of the command's time. Fields that are rare and nested
// (telemetry nodes, adjustments, citation audits, steps) still go through encoding/json.
func appendRecord(b []byte, l *scoredLine, scorer string, r *sdk.Result, steps bool) ([]byte, error) {
	b = append(b, `{"line":`...)
	b = strconv.AppendInt(b, int64(l.line), 10)
	b = append(b, `,"run_id":`...)
	b = appendString(b, l.runID)
	b = append(b, `,"scorer":`...)
	b = appendString(b, scorer)
	b = append(b, `,"status":`...)
	b = appendString(b, string(r.Status))
	b = append(b, `,"score":`...)
	if r.Score != nil {
		b = appendFloat(b, *r.Score)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"passed":`...)
	if r.Passed != nil {
		b = strconv.AppendBool(b, *r.Passed)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"dimensions":`...)
	b = appendObject(b, r.Dimensions, appendFloat)
	b = append(b, `,"flags":`...)
	b = appendStrings(b, r.Flags)
	b = append(b, `,"reason":`...)
	b = appendString(b, r.Reason)
	b = append(b, `,"error":`...)
	if r.Error != nil {
		b = append(b, `{"code":`...)
		b = appendString(b, r.Error.Code)
		b = append(b, `,"message":`...)
		b = append(appendString(b, r.Error.Message), '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"telemetry":`...)
	var err error
	if b, err = appendTelemetry(b, &r.Telemetry); err != nil {
		return b, err
	}
	if len(r.SkippedDimensions) > 0 {
		b = append(b, `,"skipped_dimensions":`...)
		b = appendObject(b, r.SkippedDimensions, appendString)
	}
	if len(r.Adjustments) > 0 {
		if b, err = appendJSON(b, `,"adjustments":`, r.Adjustments); err != nil {
			return b, err
		}
	}
	if len(r.Suggestions) > 0 {
		b = append(b, `,"suggestions":`...)
		b = appendStrings(b, r.Suggestions)
	}
	if r.CitationAudit != nil {
		if b, err = appendJSON(b, `,"citation_audit":`, r.CitationAudit); err != nil {
			return b, err
		}
	}
	if steps && len(r.Steps) > 0 {
		if b, err = appendJSON(b, `,"steps":`, r.Steps); err != nil {
			return b, err
		}
	}
	return append(b, "}\n"...), nil
}

// appendTelemetry writes sdk.Telemetry as encoding/json does: duration_ms always, the
// rest when set.
func appendTelemetry(b []byte, t *sdk.Telemetry) ([]byte, error) {
	b = append(b, `{"duration_ms":`...)
	b = appendFloat(b, t.DurationMS)
	if t.Runtime != "" {
		b = append(b, `,"runtime":`...)
		b = appendString(b, t.Runtime)
	}
	if t.Replaced != "" {
		b = append(b, `,"replaced":`...)
		b = appendString(b, t.Replaced)
	}
	for _, f := range [...]struct {
		key string
		v   int
	}{{"judge_calls", t.JudgeCalls}, {"cache_hits", t.CacheHits}, {"retries", t.Retries},
		{"prompt_tokens", t.PromptTokens}, {"completion_tokens", t.CompletionTokens}} {
		if f.v != 0 {
			b = append(b, `,"`...)
			b = append(b, f.key...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, int64(f.v), 10)
		}
	}
	if len(t.JudgeLimits) > 0 {
		b = append(b, `,"judge_limits":`...)
		b = appendStrings(b, t.JudgeLimits)
	}
	if len(t.Nodes) > 0 {
		var err error
		if b, err = appendJSON(b, `,"nodes":`, t.Nodes); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func appendJSON(b []byte, key string, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(append(b, key...), j...), nil
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendObject writes m as a JSON object with its keys sorted, as encoding/json does.
func appendObject[V any](b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, k), ':')
		b = value(b, m[k])
	}
	return append(b, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendFloat formats f as encoding/json does (ES6 number to string). Results never hold
// NaN or Inf (the host fails them), so they are written as null rather than failing.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off: control characters
// escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
