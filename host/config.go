package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/scorekit/scorekit/sdk"
)

// configSchemas caches each scorer's compiled config schema, so Open compiles it once per
// host however many tenants open the scorer. A registry may replace a scorer, so an entry
// remembers the schema bytes it was compiled from.
type configSchemas struct {
	mu sync.Mutex
	m  map[string]*configEntry
}

type configEntry struct {
	raw []byte
	cs  *compiledSchema
	err error
}

func (c *configSchemas) get(name string, raw json.RawMessage) (*compiledSchema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[name]; e != nil && bytes.Equal(e.raw, raw) {
		return e.cs, e.err
	}
	cs, err := compileSchema("https://scorekit.invalid/config/"+name+".schema.json", raw)
	if err != nil {
		err = fmt.Errorf("open %s: %w: its config_schema does not compile: %v; fix the scorer's Info.ConfigSchema", name, ErrInvalidInfo, err)
	}
	if c.m == nil {
		c.m = map[string]*configEntry{}
	}
	c.m[name] = &configEntry{raw: slices.Clone(raw), cs: cs, err: err}
	return cs, err
}

// CheckConfig checks config against info as [Host.Open] does (merged over Defaults,
// validated against ConfigSchema, the range it sets), without opening anything: for a
// config pinned before the scorer runs (a published version). Errors wrap
// [ErrInvalidConfig] and name the field.
func (h *Host) CheckConfig(info sdk.Info, config json.RawMessage) error {
	merged, err := h.configure(&info, config)
	if err != nil {
		return err
	}
	return configRange(&info, merged)
}

// configure merges info.Defaults under the caller's config (a shallow object merge: a
// field the caller sets replaces the default whole) and validates the result against
// info.ConfigSchema. It returns the config to hand to the scorer, always a JSON object.
//
// Errors wrap ErrInvalidConfig and name the scorer and the field. A scorer without a
// config schema accepts only an empty or absent config.
func (h *Host) configure(info *sdk.Info, config json.RawMessage) (json.RawMessage, error) {
	caller, err := objectFields(config)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", info.Name, &ValidationError{Doc: "config", Problem: err.Error(), kind: ErrInvalidConfig})
	}
	defaults, err := objectFields(info.Defaults)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w: defaults: %v; fix the scorer's Info.Defaults", info.Name, ErrInvalidInfo, err)
	}
	if len(bytes.TrimSpace(info.ConfigSchema)) == 0 {
		if len(caller) > 0 {
			return nil, fmt.Errorf("open %s: %w", info.Name, &ValidationError{
				Doc:     "config",
				Problem: fmt.Sprintf("unknown field %q: scorer %s takes no config; drop the config", firstKey(caller), info.Name),
				More:    len(caller) - 1,
				kind:    ErrInvalidConfig,
			})
		}
		return mergeFields(defaults, nil)
	}
	cs, err := h.configs.get(info.Name, info.ConfigSchema)
	if err != nil {
		return nil, err
	}
	merged, err := mergeFields(defaults, caller)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", info.Name, err)
	}
	inst, err := parseJSON(merged)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", info.Name, err)
	}
	if err := cs.validate(inst, "config", ErrInvalidConfig); err != nil {
		return nil, fmt.Errorf("open %s: %w", info.Name, err)
	}
	// A schema that lists properties but says nothing about others would let a typo
	// through; the contract promises that an unknown field is an error.
	if s := cs.sch; len(s.Properties) > 0 && s.AdditionalProperties == nil && len(s.PatternProperties) == 0 && s.UnevaluatedProperties == nil {
		for _, k := range sortedKeys(caller) {
			if _, ok := s.Properties[k]; !ok {
				return nil, fmt.Errorf("open %s: %w", info.Name, &ValidationError{
					Doc:     "config",
					Problem: fmt.Sprintf("unknown field %q (known: %s)", k, cs.knownFields(s.Location)),
					kind:    ErrInvalidConfig,
				})
			}
		}
	}
	return merged, nil
}

// objectFields splits a JSON object into its fields; empty input and null are no fields.
func objectFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(raw[0]))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	return m, nil
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	if c == '-' || (c >= '0' && c <= '9') {
		return "a number"
	}
	return "invalid JSON"
}

// mergeFields lays over on top of base and renders the object with sorted keys.
func mergeFields(base, over map[string]json.RawMessage) (json.RawMessage, error) {
	if len(base)+len(over) == 0 {
		return json.RawMessage("{}"), nil
	}
	m := make(map[string]json.RawMessage, len(base)+len(over))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return json.Marshal(m)
}

func parseJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func firstKey[V any](m map[string]V) string {
	if ks := sortedKeys(m); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

// configRange sets info.Range from the config when info.RangeConfig points at a field the
// config has: an object {"min", "max"} of finite numbers with min < max. A config without
// the field keeps the declared range. Errors name the field and wrap ErrInvalidConfig.
func configRange(info *sdk.Info, config json.RawMessage) error {
	if info.RangeConfig == "" {
		return nil
	}
	var doc any
	if err := json.Unmarshal(config, &doc); err != nil {
		return fmt.Errorf("open %s: %w", info.Name, &ValidationError{Doc: "config", Problem: err.Error(), kind: ErrInvalidConfig})
	}
	path := strings.Split(info.RangeConfig[1:], "/")
	for i, tok := range path {
		// RFC 6901 escapes: ~1 is '/', ~0 is '~'.
		path[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		if doc, ok = obj[path[i]]; !ok || doc == nil {
			return nil
		}
	}
	bad := func(problem string) error {
		return fmt.Errorf("open %s: %w", info.Name, &ValidationError{Doc: "config", Path: strings.Join(path, "."), Problem: problem, kind: ErrInvalidConfig})
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return bad(`the scorer reads its range here: want an object {"min": number, "max": number}`)
	}
	lo, okMin := obj["min"].(float64)
	hi, okMax := obj["max"].(float64)
	switch {
	case !okMin || !okMax:
		return bad(`the scorer reads its range here: want numbers "min" and "max", e.g. {"min": 1, "max": 5}`)
	case !(lo < hi):
		return bad(fmt.Sprintf("min %v is not below max %v; a range needs min < max, e.g. {\"min\": 1, \"max\": 5}", lo, hi))
	}
	info.Range = sdk.Range{Min: lo, Max: hi}
	return nil
}

// plan is what the pipeline needs from a scorer's Info, checked and precomputed at Open.
type plan struct {
	min, span float64 // native range
	declared  bool    // the scorer declared its range (else 0-1 is assumed)
	dims      []sdk.Dimension
	grounding []string // the scorer's grounding dimensions, in declared order: audit citations, clamp these
	decimals  float64
	threshold float64
}

// newPlan checks what the host relies on in info. Errors wrap ErrInvalidInfo.
func newPlan(info *sdk.Info) (plan, error) {
	bad := func(format string, args ...any) (plan, error) {
		return plan{}, fmt.Errorf("open %s: %w: %s; fix the scorer's Info", info.Name, ErrInvalidInfo, fmt.Sprintf(format, args...))
	}
	r := info.Range
	if r == (sdk.Range{}) {
		r = sdk.Unit
	}
	if !finite(r.Min) || !finite(r.Max) || !finite(r.Max-r.Min) || r.Max <= r.Min {
		return bad("range [%v, %v] is empty; want min < max", r.Min, r.Max)
	}
	if rc := info.RangeConfig; rc != "" && (rc[0] != '/' || strings.Contains(rc, "//")) {
		return bad("range_config %q: want a JSON Pointer to a config field, e.g. \"/scale\"", rc)
	}
	if !finite(info.Threshold) || info.Threshold < 0 || info.Threshold > 1 {
		return bad("threshold %v: want a normalized score in [0, 1]", info.Threshold)
	}
	if info.Decimals < 0 || info.Decimals > 6 {
		return bad("decimals %d: want 0-6 (0 means the default, 2)", info.Decimals)
	}
	p := plan{min: r.Min, span: r.Max - r.Min, declared: info.Range != (sdk.Range{}), dims: info.Dimensions, threshold: info.Threshold, decimals: 2}
	if info.Decimals > 0 {
		p.decimals = float64(info.Decimals)
	}
	p.decimals = math.Pow(10, p.decimals)
	var sum float64
	seen := map[string]bool{}
	for _, d := range info.Dimensions {
		switch {
		case d.Name == "":
			return bad("a dimension has no name")
		case seen[d.Name]:
			return bad("dimension %q is declared twice", d.Name)
		case !finite(d.Weight) || d.Weight < 0:
			return bad("dimension %q has weight %v; want >= 0", d.Name, d.Weight)
		}
		seen[d.Name] = true
		sum += d.Weight
		if slices.Contains(groundingDimensions, d.Name) {
			p.grounding = append(p.grounding, d.Name)
		}
	}
	if len(info.Dimensions) > 0 && sum <= 0 {
		return bad("dimension weights sum to 0; give at least one a positive weight")
	}
	return p, nil
}

// groundingDimensions are the dimension names the citation audit applies to: for a scorer
// that declares one, the host attaches the audit to the run before the call and clamps
// each such dimension by it after (Scorer.Score, steps 3 and 7). A dimension so named says
// how far the output is grounded in the run's passages, higher is better, which an output
// citing a passage that does not exist, or leaving its claims uncited, cannot be:
// faithfulness (MASIS's, the faithfulness scorer's) and hallucination_free (the share of
// the output's claims grounded in the passages). A plugin opts in by naming a dimension so;
// the contract carries no flag for it.
var groundingDimensions = []string{"faithfulness", "hallucination_free"}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// describeRange renders a native range for messages: "[1, 5]".
func (p *plan) describeRange() string {
	return fmt.Sprintf("[%v, %v]", p.min, p.min+p.span)
}
