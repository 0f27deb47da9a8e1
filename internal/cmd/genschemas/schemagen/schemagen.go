// Package schemagen reflects the sdk's Go types into the JSON Schemas under schemas/, and
// the config types of the built-in scorers that generate theirs into each scorer's
// config.schema.json. The genschemas command writes them; the schemas package's test
// regenerates them in memory and fails when the committed files are stale.
package schemagen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/scorekit/scorekit/internal/modroot"
	"github.com/scorekit/scorekit/plugins/rubric"
	"github.com/scorekit/scorekit/sdk"
)

// modulePath is the import path the comment map is keyed by.
const modulePath = "github.com/scorekit/scorekit"

// baseID prefixes every schema's $id; the file name completes it.
const baseID = "https://github.com/scorekit/scorekit/schemas/"

// File is one generated schema.
type File struct {
	// Name is the file name under schemas/.
	Name string
	// Data is the schema: sorted keys, two-space indent, trailing newline.
	Data []byte
}

// spec says how to reflect one schema.
type spec struct {
	name string
	v    any
	// tolerant documents accept unknown fields and require only fields tagged
	// jsonschema:"required"; strict ones reject unknown fields and require every field
	// without omitempty.
	tolerant bool
	// optional lists fields a strict document does not require although they lack
	// omitempty, as "Type.field".
	optional []string
	// shapes, when set, widens fields whose JSON takes more shapes than their Go type.
	shapes func(*jsonschema.Schema) error
}

// specs lists the schemas in schemas/. Run is what datasets hold, so it tolerates extra
// columns; everything a plugin sends back (Result, Info) or exchanges with the judge broker
// is strict, because the host never trusts a plugin.
var specs = []spec{
	{name: "run.schema.json", v: sdk.Run{}, tolerant: true, shapes: runShapes},
	// Telemetry is measured by the host, so a plugin need not send it; Range has a
	// documented default.
	{name: "result.schema.json", v: sdk.Result{}, optional: []string{"Result.telemetry", "Telemetry.duration_ms"}},
	{name: "info.schema.json", v: sdk.Info{}, optional: []string{"Info.range"}},
	{name: "completion_request.schema.json", v: sdk.CompletionRequest{}},
	{name: "completion_response.schema.json", v: sdk.CompletionResponse{}},
}

// Generate reflects every schema. root is the module root (see [ModuleRoot]); the sdk's
// doc comments there become the schemas' descriptions. It changes the working directory
// while it reads them, so it must not run concurrently with code that depends on it.
func Generate(root string) ([]File, error) {
	comments, err := goComments(root, "sdk")
	if err != nil {
		return nil, err
	}
	out := make([]File, 0, len(specs))
	for _, s := range specs {
		r := &jsonschema.Reflector{
			ExpandedStruct:             true,
			AllowAdditionalProperties:  s.tolerant,
			RequiredFromJSONSchemaTags: s.tolerant,
			Mapper:                     mapper(s.tolerant),
			CommentMap:                 comments,
		}
		sch := r.Reflect(s.v)
		sch.ID = jsonschema.ID(baseID + s.name)
		if err := relax(sch, s.optional); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		data, err := finish(sch, s.shapes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		out = append(out, File{Name: s.name, Data: data})
	}
	return out, nil
}

// configSpec says how to reflect one scorer's config schema. A plugin compiles to WASM
// and embeds the file, so the reflection, and its library, stay here.
type configSpec struct {
	// pkg is the scorer's package folder, relative to the module root; the file is
	// config.schema.json in it, and the package's doc comments are the descriptions.
	pkg string
	v   any
	// shapes says what a struct tag cannot.
	shapes func(*jsonschema.Schema) error
}

// configSpecs lists the scorers whose config schema is generated.
var configSpecs = []configSpec{
	{pkg: "plugins/rubric", v: rubric.Config{}, shapes: rubricShapes},
}

// ConfigSchemaFile is the name of a generated config schema in its scorer's folder.
const ConfigSchemaFile = "config.schema.json"

// GenerateConfigs reflects the config schemas of configSpecs. Each File's Name is its path
// relative to the module root. Like Generate, it changes the working directory while it
// reads comments.
func GenerateConfigs(root string) ([]File, error) {
	out := make([]File, 0, len(configSpecs))
	for _, s := range configSpecs {
		comments, err := goComments(root, s.pkg)
		if err != nil {
			return nil, err
		}
		r := &jsonschema.Reflector{ExpandedStruct: true, RequiredFromJSONSchemaTags: true, CommentMap: comments}
		sch := r.Reflect(s.v)
		sch.ID = ""
		data, err := finish(sch, s.shapes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.pkg, err)
		}
		out = append(out, File{Name: filepath.ToSlash(filepath.Join(s.pkg, ConfigSchemaFile)), Data: data})
	}
	return out, nil
}

// goComments reads the doc comments of the package in dir (relative to the module root)
// for the descriptions. AddGoComments keys comments by base joined with the walked path,
// so it must walk dir relative to the module root.
func goComments(root, dir string) (map[string]string, error) {
	comments := &jsonschema.Reflector{}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := os.Chdir(root); err != nil {
		return nil, err
	}
	err = comments.AddGoComments(modulePath, dir)
	if cerr := os.Chdir(wd); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("read %s comments: %w", dir, err)
	}
	return comments.CommentMap, nil
}

// finish applies shapes, when set, and renders the schema canonically.
func finish(sch *jsonschema.Schema, shapes func(*jsonschema.Schema) error) ([]byte, error) {
	if shapes != nil {
		if err := shapes(sch); err != nil {
			return nil, err
		}
	}
	return canonical(sch)
}

// rubricShapes bounds the choices' scores and their number, and says that a rubric
// grades by choices or by a scale, not both.
func rubricShapes(sch *jsonschema.Schema) error {
	choices, ok := sch.Properties.Get("choices")
	if !ok || choices.AdditionalProperties == nil {
		return errors.New("rubric config: no choices map to shape")
	}
	choices.AdditionalProperties.Minimum, choices.AdditionalProperties.Maximum = json.Number("0"), json.Number("1")
	choices.MinProperties, choices.MaxProperties = ptr(uint64(2)), ptr(uint64(rubric.MaxChoices))
	choices.PropertyNames = &jsonschema.Schema{MinLength: ptr(uint64(1)), MaxLength: ptr(uint64(rubric.MaxChoiceBytes))}
	sch.OneOf = []*jsonschema.Schema{
		{Title: "a grading by choices", Required: []string{"choices"}},
		{Title: "a grading on a scale", Required: []string{"scale"}},
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

var passageType = reflect.TypeFor[sdk.Passage]()

// mapper maps sdk.Passage to what its UnmarshalJSON accepts: a plain string or an
// {id, text} object. The sdk stays stdlib-only because the mapping lives here.
func mapper(tolerant bool) func(reflect.Type) *jsonschema.Schema {
	return func(t reflect.Type) *jsonschema.Schema {
		if t != passageType {
			return nil
		}
		props := jsonschema.NewProperties()
		props.Set("id", &jsonschema.Schema{Type: "string", Description: "What citations in the output refer to (\"1\", \"doc-3\"). Optional; defaults to the passage's 1-based position."})
		props.Set("text", &jsonschema.Schema{Type: "string", Description: "The passage itself."})
		obj := &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"text"}}
		if !tolerant {
			obj.AdditionalProperties = jsonschema.FalseSchema
		}
		return &jsonschema.Schema{
			Description: "One piece of retrieved evidence: a plain string (its id is its 1-based position) or an object {id, text}.",
			OneOf:       []*jsonschema.Schema{{Type: "string"}, obj},
		}
	}
}

// runShapes widens the run's fields to the shapes sdk.Run.UnmarshalJSON accepts (runs as
// agents produce them): ids as strings or numbers, the input as a string or a
// conversation, the output as a string, an assistant message or the agent's turns,
// message content as a string, null or content parts, tool-call arguments and results as
// any value, tool calls flat or in OpenAI's shape. The sdk stays stdlib-only because the
// mapping lives here.
func runShapes(sch *jsonschema.Schema) error {
	turn, call, expect := sch.Definitions["Turn"], sch.Definitions["ToolCall"], sch.Definitions["ExpectedToolCall"]
	if turn == nil || call == nil || expect == nil {
		return errors.New("run schema: no Turn, ToolCall or ExpectedToolCall in $defs")
	}
	idShape := func() []*jsonschema.Schema { return []*jsonschema.Schema{{Type: "string"}, {Type: "number"}} }
	turnRef := func() *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/Turn"} }
	// Titles name the alternatives in the host's messages ("want a string or an array of
	// chat messages, got number").
	turns := func() *jsonschema.Schema {
		return &jsonschema.Schema{Type: "array", Items: turnRef(), Title: "an array of chat messages"}
	}
	turn.Title = "a chat message {role, content}"
	widen := func(obj *jsonschema.Schema, field string, shape func(p *jsonschema.Schema)) error {
		p, ok := obj.Properties.Get(field)
		if !ok {
			return fmt.Errorf("run schema: no field %q to widen", field)
		}
		p.Type, p.Items, p.Ref = "", nil, ""
		shape(p)
		return nil
	}
	anyValue := func(p *jsonschema.Schema) {} // any JSON value; its text is kept
	objectOrText := func(p *jsonschema.Schema) {
		p.OneOf = []*jsonschema.Schema{{Type: "object"}, {Type: "string"}}
	}
	for _, w := range []struct {
		obj   *jsonschema.Schema
		field string
		shape func(p *jsonschema.Schema)
	}{
		{sch, "id", func(p *jsonschema.Schema) { p.OneOf = idShape() }},
		{sch, "input", func(p *jsonschema.Schema) {
			p.OneOf = []*jsonschema.Schema{{Type: "string"}, turns()}
		}},
		{sch, "output", func(p *jsonschema.Schema) {
			p.OneOf = []*jsonschema.Schema{{Type: "string"}, turnRef(), turns()}
		}},
		{turn, "content", func(p *jsonschema.Schema) {
			part := &jsonschema.Schema{Type: "object", Description: "A content part; text parts ({\"type\": \"text\", \"text\": ...}) and refusals are kept."}
			p.OneOf = []*jsonschema.Schema{{Type: "string"}, {Type: "null"}, {Type: "array", Items: part}}
		}},
		{turn, "tool_call_id", func(p *jsonschema.Schema) { p.OneOf = idShape() }},
		{call, "id", func(p *jsonschema.Schema) { p.OneOf = idShape() }},
		{call, "arguments", anyValue},
		{call, "result", anyValue},
		{expect, "arguments", objectOrText},
		{expect, "arguments_schema", objectOrText},
	} {
		if err := widen(w.obj, w.field, w.shape); err != nil {
			return err
		}
	}
	if ctx, ok := sch.Properties.Get("context"); ok && ctx.Items != nil {
		for _, alt := range ctx.Items.OneOf {
			if alt.Properties != nil {
				if err := widen(alt, "id", func(p *jsonschema.Schema) { p.OneOf = idShape() }); err != nil {
					return err
				}
			}
		}
	}
	// A tool call is flat ({name, arguments}) or OpenAI's ({type, function: {name,
	// arguments}}), so neither name nor arguments is required at the top.
	call.Required = nil
	fn := jsonschema.NewProperties()
	fn.Set("name", &jsonschema.Schema{Type: "string"})
	fn.Set("arguments", &jsonschema.Schema{Description: "Any JSON value; a string as the model wrote it."})
	call.Properties.Set("function", &jsonschema.Schema{Type: "object", Properties: fn,
		Description: "OpenAI's shape of a call: {\"type\": \"function\", \"function\": {\"name\", \"arguments\"}}."})
	turn.Required = nil
	return nil
}

// relax drops fields from the required lists of a strict schema; each entry is
// "Type.field", Type being the root's own name or a $defs key.
func relax(sch *jsonschema.Schema, fields []string) error {
	for _, f := range fields {
		typ, field, ok := strings.Cut(f, ".")
		if !ok {
			return fmt.Errorf("relax %q: want Type.field", f)
		}
		target := sch.Definitions[typ]
		if target == nil {
			target = sch // the root is expanded, so it is not in $defs
		}
		i := slices.Index(target.Required, field)
		if i < 0 {
			return fmt.Errorf("relax %q: no such required field", f)
		}
		target.Required = slices.Delete(target.Required, i, i+1)
	}
	return nil
}

// canonical renders a schema with sorted keys, two-space indent and a trailing newline.
func canonical(sch *jsonschema.Schema) ([]byte, error) {
	raw, err := json.Marshal(sch)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // Encode ends with a newline
		return nil, err
	}
	return buf.Bytes(), nil
}

// ModuleRoot walks up from the working directory to the folder holding go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, ok := modroot.Find(dir)
	if !ok {
		return "", errors.New("no go.mod above the working directory; run from inside the module")
	}
	return root, nil
}
