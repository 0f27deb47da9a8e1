// Package jsonsubset compiles and checks JSON Schemas of the subset the built-in scorers
// enforce (json_valid's schema, tool_calls' arguments_schema): the draft-07 keywords in
// schemaKeywords, written against the standard library so that a scorer using it costs a
// WASM instance nothing at start. It is internal: the subset is documented where each
// scorer's config is, not as a Go API.
package jsonsubset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// schemaKeywords lists the JSON Schema keywords json_valid's validator enforces. It is a
// small draft-07 subset written against the standard library, because the scorers that use
// it compile to WebAssembly (GOOS=wasip1) and stay dependency-free. A schema using
// any other keyword is rejected when the scorer is configured, never silently ignored.
var schemaKeywords = []string{
	"type", "enum", "const",
	"properties", "required", "additionalProperties", "minProperties", "maxProperties",
	"items", "minItems", "maxItems", "uniqueItems",
	"minLength", "maxLength", "pattern",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"allOf", "anyOf", "oneOf", "not",
}

// annotationKeywords carry no constraint and are accepted.
var annotationKeywords = []string{"$schema", "$id", "$comment", "title", "description", "default", "examples"}

// jsonSchema is a compiled schema node. A nil *jsonSchema accepts everything; boolean
// schemas compile to always/never.
type jsonSchema struct {
	never      bool
	types      []string
	enum       []any
	constVal   *any
	props      map[string]*jsonSchema
	required   []string
	additional *jsonSchema // nil: any additional property is allowed
	noExtra    bool        // additionalProperties: false
	propCount  sizeRange   // minProperties, maxProperties
	items      *jsonSchema
	itemCount  sizeRange // minItems, maxItems
	unique     bool
	length     sizeRange // minLength, maxLength, in characters
	pattern    *regexp.Regexp
	minimum    *float64
	maximum    *float64
	exclMin    *float64
	exclMax    *float64
	multipleOf *float64
	allOf      []*jsonSchema
	anyOf      []*jsonSchema
	oneOf      []*jsonSchema
	not        *jsonSchema
}

// Schema is a compiled JSON Schema of the subset json_valid enforces: the draft-07
// keywords in schemaKeywords, annotations ignored, any other keyword refused when it is
// compiled, naming it. It is written against the standard library, so a scorer that uses it
// (tool_calls) costs a WASM instance nothing at start; a full validator's package
// initialization compiles every draft's metaschema in each instance. A Schema is safe
// for concurrent use.
type Schema struct{ root *jsonSchema }

// Compile compiles a schema of the subset, or says which keyword or value is wrong and
// where.
func Compile(raw []byte) (*Schema, error) {
	n, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	return &Schema{root: n}, nil
}

// Validate returns nil when v (decoded with json.Decoder.UseNumber) satisfies the schema,
// else an error naming the first violation's place ("#/time: does not match pattern ...").
func (s *Schema) Validate(v any) error { return s.root.validate(v, "#") }

// compileSchema parses a schema, rejecting keywords outside schemaKeywords with an error
// that names the keyword and its location.
func compileSchema(raw json.RawMessage) (*jsonSchema, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return compileNode(v, "#")
}

func compileNode(v any, at string) (*jsonSchema, error) {
	switch s := v.(type) {
	case bool:
		return &jsonSchema{never: !s}, nil
	case map[string]any:
		return compileObject(s, at)
	}
	return nil, fmt.Errorf("schema at %s: want an object or a boolean", at)
}

func compileObject(m map[string]any, at string) (*jsonSchema, error) {
	n := &jsonSchema{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		where := at + "/" + k
		var err error
		switch k {
		case "type":
			n.types, err = stringList(v, where)
			for _, t := range n.types {
				if !slices.Contains([]string{"object", "array", "string", "number", "integer", "boolean", "null"}, t) {
					return nil, fmt.Errorf("schema at %s: unknown type %q", where, t)
				}
			}
		case "enum":
			l, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("schema at %s: want an array", where)
			}
			n.enum = l
		case "const":
			c := v
			n.constVal = &c
		case "properties":
			pm, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("schema at %s: want an object", where)
			}
			n.props = map[string]*jsonSchema{}
			for name, sub := range pm {
				if n.props[name], err = compileNode(sub, where+"/"+name); err != nil {
					return nil, err
				}
			}
		case "required":
			n.required, err = stringList(v, where)
		case "additionalProperties":
			if b, ok := v.(bool); ok {
				n.noExtra = !b
			} else {
				n.additional, err = compileNode(v, where)
			}
		case "items":
			n.items, err = compileNode(v, where)
		case "minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength":
			err = n.setSize(k, v, where)
		case "uniqueItems":
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("schema at %s: want a boolean", where)
			}
			n.unique = b
		case "pattern":
			p, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("schema at %s: want a string", where)
			}
			if n.pattern, err = regexp.Compile(p); err != nil {
				return nil, fmt.Errorf("schema at %s: %w (patterns use Go's RE2 syntax)", where, err)
			}
		case "minimum":
			n.minimum, err = number(v, where)
		case "maximum":
			n.maximum, err = number(v, where)
		case "exclusiveMinimum":
			n.exclMin, err = number(v, where)
		case "exclusiveMaximum":
			n.exclMax, err = number(v, where)
		case "multipleOf":
			n.multipleOf, err = number(v, where)
			if err == nil && *n.multipleOf <= 0 {
				err = fmt.Errorf("schema at %s: want a number > 0", where)
			}
		case "allOf", "anyOf", "oneOf":
			var subs []*jsonSchema
			subs, err = compileList(v, where)
			switch k {
			case "allOf":
				n.allOf = subs
			case "anyOf":
				n.anyOf = subs
			default:
				n.oneOf = subs
			}
		case "not":
			n.not, err = compileNode(v, where)
		default:
			if slices.Contains(annotationKeywords, k) {
				continue
			}
			return nil, fmt.Errorf("schema at %s: keyword %q is not supported by the scorers' validator (supported: %s; annotations %s are ignored); remove it or check with a full validator",
				where, k, strings.Join(schemaKeywords, ", "), strings.Join(annotationKeywords, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	return n, nil
}

// sizeRange bounds a size (an object's properties, an array's items, a string's
// characters); a nil end is unbounded.
type sizeRange struct{ min, max *int }

// setSize reads the keyword k that bounds a size: min or max, then Properties, Items or
// Length.
func (n *jsonSchema) setSize(k string, v any, at string) error {
	c, err := count(v, at)
	if err != nil {
		return err
	}
	r := map[string]*sizeRange{"Properties": &n.propCount, "Items": &n.itemCount, "Length": &n.length}[k[len("min"):]]
	if strings.HasPrefix(k, "min") {
		r.min = c
	} else {
		r.max = c
	}
	return nil
}

// check returns an error at at when size, counted in units, is out of the range.
func (r sizeRange) check(size int, at, units string) error {
	if r.min != nil && size < *r.min {
		return fmt.Errorf("%s: want at least %d %s", at, *r.min, units)
	}
	if r.max != nil && size > *r.max {
		return fmt.Errorf("%s: want at most %d %s", at, *r.max, units)
	}
	return nil
}

func compileList(v any, at string) ([]*jsonSchema, error) {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return nil, fmt.Errorf("schema at %s: want a non-empty array of schemas", at)
	}
	out := make([]*jsonSchema, len(l))
	for i, s := range l {
		var err error
		if out[i], err = compileNode(s, fmt.Sprintf("%s/%d", at, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func stringList(v any, at string) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("schema at %s: want a string or an array of strings", at)
	}
	out := make([]string, len(l))
	for i, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("schema at %s/%d: want a string", at, i)
		}
		out[i] = s
	}
	return out, nil
}

func number(v any, at string) (*float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("schema at %s: want a number", at)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("schema at %s: %w", at, err)
	}
	return &f, nil
}

func count(v any, at string) (*int, error) {
	f, err := number(v, at)
	if err != nil {
		return nil, err
	}
	if *f < 0 || *f != math.Trunc(*f) {
		return nil, fmt.Errorf("schema at %s: want a non-negative integer", at)
	}
	i := int(*f)
	return &i, nil
}

// validate returns nil when v (decoded with UseNumber) satisfies the schema, else an error
// naming the first violation's location.
func (n *jsonSchema) validate(v any, at string) error {
	if n == nil {
		return nil
	}
	if n.never {
		return fmt.Errorf("%s: no value is allowed here", at)
	}
	if len(n.types) > 0 && !slices.ContainsFunc(n.types, func(t string) bool { return hasType(v, t) }) {
		return fmt.Errorf("%s: want type %s, got %s", at, strings.Join(n.types, " or "), TypeOf(v))
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(e, v) }) {
		return fmt.Errorf("%s: value is not one of the enum", at)
	}
	if n.constVal != nil && !jsonEqual(*n.constVal, v) {
		return fmt.Errorf("%s: value differs from const", at)
	}
	var err error
	switch x := v.(type) {
	case map[string]any:
		err = n.validateObject(x, at)
	case []any:
		err = n.validateArray(x, at)
	case string:
		err = n.validateString(x, at)
	case json.Number:
		err = n.validateNumber(x, at)
	}
	if err != nil {
		return err
	}
	return n.validateCombinators(v, at)
}

func (n *jsonSchema) validateObject(x map[string]any, at string) error {
	for _, r := range n.required {
		if _, ok := x[r]; !ok {
			return fmt.Errorf("%s: missing required property %q", at, r)
		}
	}
	if err := n.propCount.check(len(x), at, "properties"); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(x)) {
		if sub, ok := n.props[k]; ok {
			if err := sub.validate(x[k], at+"/"+k); err != nil {
				return err
			}
			continue
		}
		if n.noExtra {
			return fmt.Errorf("%s: property %q is not allowed", at, k)
		}
		if err := n.additional.validate(x[k], at+"/"+k); err != nil {
			return err
		}
	}
	return nil
}

func (n *jsonSchema) validateArray(x []any, at string) error {
	if err := n.itemCount.check(len(x), at, "items"); err != nil {
		return err
	}
	if n.unique {
		if i, j, dup := firstDuplicate(x); dup {
			return fmt.Errorf("%s: items %d and %d are equal", at, i, j)
		}
	}
	for i, e := range x {
		if err := n.items.validate(e, fmt.Sprintf("%s/%d", at, i)); err != nil {
			return err
		}
	}
	return nil
}

func (n *jsonSchema) validateString(x, at string) error {
	if err := n.length.check(utf8.RuneCountInString(x), at, "characters"); err != nil {
		return err
	}
	if n.pattern != nil && !n.pattern.MatchString(x) {
		return fmt.Errorf("%s: does not match pattern %s", at, n.pattern)
	}
	return nil
}

func (n *jsonSchema) validateNumber(x json.Number, at string) error {
	f, err := x.Float64()
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	switch {
	case n.minimum != nil && f < *n.minimum:
		return fmt.Errorf("%s: %v < minimum %v", at, f, *n.minimum)
	case n.maximum != nil && f > *n.maximum:
		return fmt.Errorf("%s: %v > maximum %v", at, f, *n.maximum)
	case n.exclMin != nil && f <= *n.exclMin:
		return fmt.Errorf("%s: %v <= exclusiveMinimum %v", at, f, *n.exclMin)
	case n.exclMax != nil && f >= *n.exclMax:
		return fmt.Errorf("%s: %v >= exclusiveMaximum %v", at, f, *n.exclMax)
	case n.multipleOf != nil:
		q := f / *n.multipleOf
		if math.Abs(q-math.Round(q)) > 1e-9 {
			return fmt.Errorf("%s: %v is not a multiple of %v", at, f, *n.multipleOf)
		}
	}
	return nil
}

func (n *jsonSchema) validateCombinators(v any, at string) error {
	for i, s := range n.allOf {
		if err := s.validate(v, at); err != nil {
			return fmt.Errorf("allOf/%d: %w", i, err)
		}
	}
	if len(n.anyOf) > 0 && !slices.ContainsFunc(n.anyOf, func(s *jsonSchema) bool { return s.validate(v, at) == nil }) {
		return fmt.Errorf("%s: matches none of anyOf", at)
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, s := range n.oneOf {
			if s.validate(v, at) == nil {
				matched++
			}
		}
		if matched != 1 {
			return fmt.Errorf("%s: matches %d of oneOf, want exactly 1", at, matched)
		}
	}
	if n.not != nil && n.not.validate(v, at) == nil {
		return fmt.Errorf("%s: matches the schema under not", at)
	}
	return nil
}

func hasType(v any, t string) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case json.Number:
		if t == "number" {
			return true
		}
		if t == "integer" {
			f, err := x.Float64()
			return err == nil && f == math.Trunc(f)
		}
	}
	return false
}

// TypeOf names v's JSON type as a schema's "type" does ("integer" for a whole number).
func TypeOf(v any) string {
	for _, t := range []string{"null", "boolean", "string", "array", "object", "integer", "number"} {
		if hasType(v, t) {
			return t
		}
	}
	return "unknown"
}

// jsonEqual compares two decoded JSON values; numbers compare by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, ex := x.Float64()
		fy, ey := y.Float64()
		return ex == nil && ey == nil && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return a == b
}

// firstDuplicate returns the first pair i < j of equal items (by jsonEqual) in the order a
// loop over i, then j, finds them: the smallest i that has an equal later item, and the
// first such j. Items are keyed by a canonical encoding, so the cost is linear in the
// array's size rather than quadratic in its length.
func firstDuplicate(x []any) (i, j int, dup bool) {
	first := make(map[string]int, len(x))  // key -> first index
	second := make(map[string]int, len(x)) // key -> second index
	var b []byte
	for k, v := range x {
		var ok bool
		b, ok = appendKey(b[:0], v)
		if !ok {
			continue // holds a number out of float64's range, equal to nothing
		}
		if f, seen := first[string(b)]; !seen {
			first[string(b)] = k
		} else if _, twice := second[string(b)]; !twice {
			second[string(b)] = k
			if !dup || f < i {
				i, j, dup = f, k, true
			}
		}
	}
	return i, j, dup
}

// appendKey appends a canonical encoding of a decoded JSON value: two values have the same
// key exactly when jsonEqual holds (numbers by float64 value, objects whatever their key
// order). ok is false for a value holding a number that does not convert to float64, which
// jsonEqual finds equal to nothing.
func appendKey(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, 'z'), true
	case bool:
		if x {
			return append(b, 't'), true
		}
		return append(b, 'f'), true
	case string:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		return append(b, x...), true
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return b, false
		}
		if f == 0 {
			f = 0 // -0 equals 0
		}
		b = append(b, 'n')
		b = strconv.AppendUint(b, math.Float64bits(f), 16)
		return append(b, ';'), true
	case []any:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		for _, e := range x {
			var ok bool
			if b, ok = appendKey(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case map[string]any:
		b = append(b, '{')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b = strconv.AppendInt(b, int64(len(k)), 10)
			b = append(b, ':')
			b = append(b, k...)
			var ok bool
			if b, ok = appendKey(b, x[k]); !ok {
				return b, false
			}
		}
		return b, true
	}
	return b, false
}
