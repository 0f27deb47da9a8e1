package heuristic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/scorekit/scorekit/internal/jsonsubset"
	"github.com/scorekit/scorekit/sdk"
)

// jsonValidScorer is the scorer NewJSONValid returns.
type jsonValidScorer struct {
	schema *jsonsubset.Schema
}

type jsonValidConfig struct {
	Schema json.RawMessage `json:"schema"`
}

var (
	_ sdk.Scorer     = (*jsonValidScorer)(nil)
	_ sdk.Configurer = (*jsonValidScorer)(nil)
)

// NewJSONValid returns the JSON validity scorer with no schema.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It scores 1 when the output is valid JSON and 0 otherwise, as autoevals' ValidJSON
// does: without a schema the output must parse to an object or an array (a bare number or
// string scores 0); with a schema in the config it must satisfy the schema, whatever its type.
//
// The schema validator (internal/jsonsubset) enforces the draft-07 keywords (type, enum, const,
// properties, required, additionalProperties, min/maxProperties, items, min/maxItems,
// uniqueItems, min/maxLength, pattern in Go's RE2 syntax, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, multipleOf, allOf, anyOf, oneOf, not) and ignores
// annotations ($schema, $id, $comment, title, description, default, examples). Any other
// keyword ($ref, format, if/then/else, ...) is a config error.
func NewJSONValid() sdk.Scorer { return &jsonValidScorer{} }

const jsonValidSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"schema": {"type": ["object", "boolean", "null"], "description": "A JSON Schema (draft-07 subset: type, enum, const, properties, required, additionalProperties, minProperties, maxProperties, items, minItems, maxItems, uniqueItems, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, allOf, anyOf, oneOf, not) the output must satisfy. Optional. Default is none: the output must be a JSON object or array."}}}`

// Info describes the scorer.
func (*jsonValidScorer) Info() sdk.Info {
	return describe("json_valid",
		"1 when the output is a JSON object or array (or satisfies the configured JSON Schema), else 0. autoevals' ValidJSON.",
		1, jsonValidSchema, `{"schema": null}`)
}

// Configure compiles the schema, if any.
func (j *jsonValidScorer) Configure(raw json.RawMessage) error {
	cfg := jsonValidConfig{}
	if err := decodeConfig("json_valid", j.Info().Defaults, raw, &cfg); err != nil {
		return err
	}
	j.schema = nil
	if s := bytes.TrimSpace(cfg.Schema); len(s) > 0 && string(s) != "null" {
		compiled, err := jsonsubset.Compile(s)
		if err != nil {
			return fmt.Errorf("configure json_valid: %w", err)
		}
		j.schema = compiled
	}
	return nil
}

// Score grades call.Run: is the output valid JSON (of the schema)?
func (j *jsonValidScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if r, ok := skipToolOnly("json_valid", &call.Run); ok {
		return r, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(call.Run.Output)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return sdk.Scored(0, "the output is not valid JSON: "+err.Error()), nil
	}
	if dec.More() {
		return sdk.Scored(0, "the output is not valid JSON: text after the first value"), nil
	}
	if err := ctx.Err(); err != nil { // decoding a large output took the deadline
		return sdk.Result{}, err
	}
	if j.schema != nil {
		if err := j.schema.Validate(v); err != nil {
			return sdk.Scored(0, "the output does not satisfy the schema: "+err.Error()), nil
		}
		return sdk.Scored(1, "the output is valid JSON and satisfies the schema"), nil
	}
	switch v.(type) {
	case map[string]any, []any:
		return sdk.Scored(1, "the output is a valid JSON "+jsonsubset.TypeOf(v)), nil
	}
	return sdk.Scored(0, fmt.Sprintf("the output is a JSON %s, not an object or array", jsonsubset.TypeOf(v))), nil
}
