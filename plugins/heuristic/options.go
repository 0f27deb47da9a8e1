package heuristic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// version is the version every scorer in this file set reports.
const version = "1.0.0"

// describe builds the Info shared by the deterministic scorers: native range 0-1, no
// capabilities. schema and defaults may be empty for scorers without a config.
func describe(name, description string, threshold float64, schema, defaults string) sdk.Info {
	info := sdk.Info{
		Name:        name,
		Version:     version,
		ABIVersion:  sdk.ABIVersion,
		Description: description,
		Range:       sdk.Unit,
		Threshold:   threshold,
	}
	if schema != "" {
		info.ConfigSchema = json.RawMessage(schema)
	}
	if defaults != "" {
		info.Defaults = json.RawMessage(defaults)
	}
	return info
}

// decodeConfig decodes defaults and then raw over them into dst, rejecting unknown fields.
// The host validates configs against the schema and merges the defaults itself; doing it
// here as well keeps a scorer correct when it is driven without the host (tests, a guest).
func decodeConfig(name string, defaults, raw json.RawMessage, dst any) error {
	if err := strictDecode(defaults, dst); err != nil {
		return fmt.Errorf("configure %s: defaults: %w", name, err)
	}
	if err := strictDecode(raw, dst); err != nil {
		return fmt.Errorf("configure %s: %w; see its config_schema in `scorekit scorers`", name, err)
	}
	return nil
}

func strictDecode(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// expectedFromSchema is the JSON Schema of the expected_from field of the scorers that
// compare the output with a reference, as autoevals does.
const expectedFromSchema = `"expected_from": {"type": "string", "pattern": "^(expected|input|metadata\\..+)$",
	"description": "Where the reference comes from: expected (run.expected), input (run.input) or metadata.KEY (a string in run.metadata). Optional. Default is expected."}`

// refConfig is the expected_from field of the configs of the scorers that compare the
// output with a reference, as autoevals does.
type refConfig struct {
	ExpectedFrom string `json:"expected_from"`
}

// fromExpected is the default: the reference is run.expected.
var fromExpected = refConfig{ExpectedFrom: "expected"}

// check validates the expected_from value.
func (r refConfig) check(name string) error {
	switch from := r.ExpectedFrom; {
	case from == "expected", from == "input":
		return nil
	case strings.HasPrefix(from, "metadata.") && len(from) > len("metadata."):
		return nil
	}
	return fmt.Errorf("configure %s: expected_from %q: want expected, input or metadata.KEY", name, r.ExpectedFrom)
}

// checker is a config that checks what its schema cannot say.
type checker interface{ check(name string) error }

// configure decodes a scorer's config: its defaults, then raw over them ([decodeConfig]),
// then the config's own check when it has one; it sets *dst only when all pass, so a
// config that fails leaves the scorer as it was.
func configure[C any](name string, defaults, raw json.RawMessage, dst *C) error {
	var cfg C
	if err := decodeConfig(name, defaults, raw, &cfg); err != nil {
		return err
	}
	if c, ok := any(cfg).(checker); ok {
		if err := c.check(name); err != nil {
			return err
		}
	}
	*dst = cfg
	return nil
}

// reference returns the text an autoevals-style scorer compares the output with, or a
// skipped result saying why there is none, or why there is no output text to compare
// (a turn whose only output is its tool calls).
func reference(name, from string, run *sdk.Run) (string, *sdk.Result) {
	if r, ok := skipToolOnly(name, run); ok {
		return "", &r
	}
	var ref string
	switch {
	case from == "" || from == "expected":
		ref = run.Expected
	case from == "input":
		ref = run.Input
	default:
		key := strings.TrimPrefix(from, "metadata.")
		v, ok := run.Metadata[key]
		if !ok {
			r := sdk.Skipped(fmt.Sprintf("%s compares the output with run.metadata.%s, which is absent; add it to the run or change expected_from", name, key))
			return "", &r
		}
		s, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				r := sdk.Skipped(fmt.Sprintf("%s: run.metadata.%s is not a string or JSON value", name, key))
				return "", &r
			}
			s = string(b)
		}
		ref = s
	}
	if ref == "" && (from == "" || from == "expected") {
		r := sdk.Skipped(name + " compares the output with run.expected, which is empty; add an expected answer to the run or set expected_from (input or metadata.KEY)")
		return "", &r
	}
	return ref, nil
}

// step returns a Step named name whose output is the JSON encoding of v. Callers pass maps
// of strings, numbers and string slices, which always encode; should one ever fail, the
// step carries the error instead of an output.
func step(name string, v any) sdk.Step {
	b, err := json.Marshal(v)
	if err != nil {
		return sdk.Step{Name: name, Prompt: "step output not encodable: " + err.Error()}
	}
	return sdk.Step{Name: name, Output: b}
}

// text builds the short reasons of the scorers that run most, without fmt: f2 writes what
// %.2f writes, f0 what %.0f writes, d what %d writes.
type text []byte

func (t text) s(v string) text   { return append(t, v...) }
func (t text) f2(v float64) text { return strconv.AppendFloat(t, v, 'f', 2, 64) }
func (t text) f0(v float64) text { return strconv.AppendFloat(t, v, 'f', 0, 64) }
func (t text) d(v int) text      { return strconv.AppendInt(t, int64(v), 10) }

// numbersStep is step(name, m) for a map m of numbers with keys (sorted, plain ASCII names)
// and vals, written without reflection: the bytes encoding/json writes for the map, which
// sorts its keys and formats floats as below. A value it cannot encode (NaN, Inf) goes
// through step, which records the error as encoding/json reports it.
func numbersStep(name string, keys []string, vals []float64) sdk.Step {
	return appendNumbersStep(make([]byte, 0, 24*len(keys)+2), name, keys, vals)
}

// appendNumbersStep is numbersStep writing the output at the end of b, so that a caller can
// carve the step's output and its reason from one allocation.
func appendNumbersStep(b []byte, name string, keys []string, vals []float64) sdk.Step {
	b = append(b, '{')
	for i, k := range keys {
		f := vals[i]
		if math.IsNaN(f) || math.IsInf(f, 0) {
			m := make(map[string]float64, len(keys))
			for j, k := range keys {
				m[k] = vals[j]
			}
			return step(name, m)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = appendJSONFloat(b, f)
	}
	return sdk.Step{Name: name, Output: append(b, '}')}
}

// appendJSONFloat formats a finite float64 as encoding/json does: the shortest decimal,
// in exponent form below 1e-6 or from 1e21 on, with a two-digit negative exponent
// shortened (1e-07 -> 1e-7).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
