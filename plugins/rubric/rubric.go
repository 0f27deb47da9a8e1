// Package rubric is the judge as configuration: a scorer whose criteria, prompt and
// grading are its config, so a team writes what good means instead of code.
//
// A config has:
//
//   - instructions: the criteria, in plain words (required);
//   - template: how the run is shown to the judge, a Go text/template over the run's
//     fields (input, output, expected, context, conversation, tool_calls, metadata,
//     purpose, agent) with a small set of functions; optional, [DefaultTemplate] shows
//     every field the run has. It is parsed and checked when the scorer is configured:
//     an unknown field, an unknown function or a construct outside the safe set is an
//     invalid config that names it and its line;
//   - a grading, exactly one of: choices, named answers mapped to scores in [0, 1]
//     (autoevals' LLMClassifier), or scale, a numeric range such as 1-5, 0-10 or 0-100
//     that the judge scores on and the host normalizes like any declared range (the Info
//     says the range is the config's "/scale");
//   - reasoning: whether the judge reasons before its verdict (default true);
//   - model, temperature, max_tokens: the judge request; the host serves a model only
//     when its operator allows it.
//
// The judge is asked for one JSON object, by a JSON schema sent as structured output
// where the endpoint offers it; the answer is read with sdk/verdict either way. An answer
// that cannot be read, a choice that is not one of the choices, or a score outside the
// scale is a failed result with the reason and the judge's answer, never a score.
//
// Unlike the other judge scorers, the rubric sends every run to the judge, empty outputs
// and error messages included: its criteria are the team's, and may reward silence or an
// honest error report.
//
// The package depends on the standard library, the sdk and the judge scorers' shared kit
// (internal/judgekit) only: it also compiles to WASM.
package rubric

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"text/template/parse"
	"unicode/utf8"

	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/sdk"
)

// Name is the scorer's name.
const Name = "rubric"

// Limits on a config. They keep a config a config: a rubric's criteria fit in a page,
// and a template that needs more than this is a program.
const (
	// MaxInstructionsBytes caps Config.Instructions.
	MaxInstructionsBytes = 32 << 10
	// MaxTemplateBytes caps Config.Template.
	MaxTemplateBytes = 16 << 10
	// MaxChoices caps Config.Choices.
	MaxChoices = 20
	// MaxChoiceBytes caps the name of one choice.
	MaxChoiceBytes = 100
	// MaxScale bounds the ends of Config.Scale.
	MaxScale = 1e6
)

// Config is the rubric's config. Exactly one of Choices and Scale is set.
type Config struct {
	// Instructions are the criteria the judge grades by, in plain words: what the agent
	// should have done, and what each choice or each end of the scale means. Required.
	Instructions string `json:"instructions" jsonschema:"required,minLength=1,maxLength=32768"`
	// Template renders the run for the judge: a Go text/template over the run's fields,
	// {{.input}}, {{.output}}, {{.expected}}, {{.purpose}}, {{.agent}}, {{.metadata}} (JSON)
	// and the lists {{.context}} (id, text), {{.conversation}} (role, content, name,
	// tool_call_id, tool_calls) and {{.tool_calls}} (id, name, arguments, result), with the
	// functions json, meta, lower, upper, trim, printf, len, index, eq, ne, lt, le, gt, ge,
	// and, or, not. A template error is an invalid config. Optional. Default shows every
	// field the run has, each in its own tagged section.
	Template string `json:"template,omitempty" jsonschema:"maxLength=16384"`
	// Choices maps each answer the judge may choose to its score in [0, 1], e.g.
	// {"correct": 1, "partly correct": 0.5, "wrong": 0}. Between 2 and 20 choices; names
	// are matched without regard to case.
	Choices map[string]float64 `json:"choices,omitempty"`
	// Scale is the numeric scale the judge scores on, e.g. {"min": 1, "max": 5}; the host
	// normalizes a score on it to [0, 1] (4 on 1-5 is 0.75).
	Scale *Scale `json:"scale,omitempty"`
	// Reasoning asks the judge to reason step by step before its verdict; the reasoning
	// becomes the result's reason. Optional. Default is true.
	Reasoning bool `json:"reasoning" jsonschema:"default=true"`
	// Model is the judge model to ask, among those the host's operator allows. Optional.
	// Default is the host's judge model.
	Model string `json:"model,omitempty" jsonschema:"maxLength=200"`
	// Temperature of the judge. Optional. Default is 0.
	Temperature float64 `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=2,default=0"`
	// MaxTokens caps the judge's answer. Optional. Default is the host's.
	MaxTokens int `json:"max_tokens,omitempty" jsonschema:"minimum=1,maximum=65536"`
}

// Scale is a numeric scale: the judge gives a number from Min to Max.
type Scale struct {
	// Min is the lowest score, e.g. 1.
	Min float64 `json:"min" jsonschema:"required,minimum=-1000000,maximum=1000000"`
	// Max is the highest score, e.g. 5; above Min.
	Max float64 `json:"max" jsonschema:"required,minimum=-1000000,maximum=1000000"`
}

// configSchema is generated from Config by internal/cmd/genschemas (go generate ./schemas).
//
//go:embed config.schema.json
var configSchema []byte

const defaults = `{"reasoning": true}`

// scorer implements sdk.Scorer and sdk.Configurer. After Configure it only reads its
// fields, so concurrent Score calls are safe.
type scorer struct {
	cfg      Config
	tmpl     *parse.Tree
	choices  []choice // by score, highest first, then by name
	schema   json.RawMessage
	format   string // the answer format the prompt ends with
	verdicts string // "choices" or "scale", for messages
}

// choice is one named answer and its score.
type choice struct {
	name  string
	score float64
}

var (
	_ sdk.Scorer     = (*scorer)(nil)
	_ sdk.Configurer = (*scorer)(nil)
)

// New returns the rubric scorer. It must be configured before it scores: a rubric has no
// criteria of its own.
func New() sdk.Scorer { return &scorer{} }

// ObservesContext reports true: the scorer's time is spent waiting on the judge, whose calls
// end with their context, and its own work between them is short. A host
// (host.ContextObserver) then does not count its calls against the few it allows native
// code that cannot be stopped, which would cap a worker's judge calls at one per core.
func (*scorer) ObservesContext() bool { return true }

// Info describes the scorer.
func (s *scorer) Info() sdk.Info {
	info := judgekit.Info(Name, "The judge as configuration: grades a run against criteria you write (instructions, and a template "+
		"over the run's fields) by named choices mapped to scores, or on a numeric scale (1-5, 0-10, 0-100) the host normalizes.",
		string(configSchema), defaults)
	info.RangeConfig = "/scale"
	return info
}

// Configure reads and checks the config, and parses and checks its template. The host has
// validated the config against the schema; Configure checks again, so that the scorer is
// safe to use without a host, and checks what a schema cannot say (one grading, not two;
// choice names unique; min below max; the template).
func (s *scorer) Configure(raw json.RawMessage) error {
	cfg := Config{Reasoning: true}
	if err := judgekit.DecodeConfig(Name, raw, &cfg); err != nil {
		return err
	}
	if err := cfg.check(); err != nil {
		return fmt.Errorf("rubric: config: %w", err)
	}
	src := cfg.Template
	if src == "" {
		src = DefaultTemplate
	}
	tmpl, err := parseTemplate(src)
	if err != nil {
		return fmt.Errorf("rubric: config: template: %w", err)
	}
	s.cfg, s.tmpl = cfg, tmpl
	if cfg.Scale != nil {
		s.verdicts = "scale"
	} else {
		s.verdicts = "choices"
		s.choices = sortedChoices(cfg.Choices)
	}
	s.schema, s.format = s.answerSpec()
	return nil
}

// check says what is wrong with a decoded config, naming the field and the fix.
func (c *Config) check() error {
	switch n := len(strings.TrimSpace(c.Instructions)); {
	case n == 0:
		return errors.New(`instructions is empty; write the criteria the judge grades by (e.g. "Does the reply give the customer a next step?")`)
	case len(c.Instructions) > MaxInstructionsBytes:
		return fmt.Errorf("instructions is %d bytes, over the %d allowed; keep the criteria to what the judge needs", len(c.Instructions), MaxInstructionsBytes)
	}
	if len(c.Template) > MaxTemplateBytes {
		return fmt.Errorf("template is %d bytes, over the %d allowed", len(c.Template), MaxTemplateBytes)
	}
	switch {
	case c.Scale == nil && len(c.Choices) == 0:
		return errors.New(`no grading: set choices (e.g. {"yes": 1, "no": 0}) or scale (e.g. {"min": 1, "max": 5})`)
	case c.Scale != nil && len(c.Choices) > 0:
		return errors.New("both choices and scale are set; a rubric grades one way: keep one")
	case c.Scale != nil:
		lo, hi := c.Scale.Min, c.Scale.Max
		if !finite(lo) || !finite(hi) || math.Abs(lo) > MaxScale || math.Abs(hi) > MaxScale {
			return fmt.Errorf("scale: min %v and max %v must be numbers from %v to %v", lo, hi, -MaxScale, MaxScale)
		}
		if !(lo < hi) {
			return fmt.Errorf("scale: min %v is not below max %v; e.g. {\"min\": 1, \"max\": 5}", lo, hi)
		}
	default:
		if err := checkChoices(c.Choices); err != nil {
			return fmt.Errorf("choices: %w", err)
		}
	}
	switch {
	case !finite(c.Temperature) || c.Temperature < 0 || c.Temperature > 2:
		return fmt.Errorf("temperature %v: want 0 to 2", c.Temperature)
	case c.MaxTokens < 0:
		return fmt.Errorf("max_tokens %d: want a positive number, or leave it out for the host's", c.MaxTokens)
	case len(c.Model) > 200 || strings.TrimSpace(c.Model) != c.Model:
		return fmt.Errorf("model %q: want a model name (e.g. gpt-4o-mini), or leave it out for the host's", c.Model)
	}
	return nil
}

func checkChoices(choices map[string]float64) error {
	if len(choices) < 2 || len(choices) > MaxChoices {
		return fmt.Errorf("%d choices: want 2 to %d", len(choices), MaxChoices)
	}
	seen := map[string]string{}
	for _, c := range sortedChoices(choices) {
		switch {
		case strings.TrimSpace(c.name) == "" || strings.TrimSpace(c.name) != c.name:
			return fmt.Errorf("choice %q: a name must be non-empty, without spaces around it", c.name)
		case len(c.name) > MaxChoiceBytes || !utf8.ValidString(c.name):
			return fmt.Errorf("choice %q: a name is at most %d bytes of text", c.name, MaxChoiceBytes)
		case !finite(c.score) || c.score < 0 || c.score > 1:
			return fmt.Errorf("choice %q scores %v: want a score from 0 to 1", c.name, c.score)
		}
		key := strings.ToLower(c.name)
		if other, dup := seen[key]; dup {
			return fmt.Errorf("choices %q and %q differ only in case; the judge's answer is matched without regard to case", other, c.name)
		}
		seen[key] = c.name
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
