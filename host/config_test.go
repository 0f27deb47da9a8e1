package host

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

const judgeConfigSchema = `{
	"type": "object",
	"properties": {
		"model": {"type": "string"},
		"temperature": {"type": "number", "minimum": 0, "maximum": 2},
		"samples": {"type": "integer", "minimum": 1}
	},
	"required": ["model"],
	"additionalProperties": false
}`

func TestOpenConfig(t *testing.T) {
	cases := []struct {
		name     string
		schema   string // Info.ConfigSchema
		defaults string // Info.Defaults
		config   string // the caller's
		want     string // the config the scorer receives; "" means Open fails
		msg      []string
	}{
		{name: "absent config takes the defaults", schema: judgeConfigSchema, defaults: `{"model":"m","temperature":0}`,
			want: `{"model":"m","temperature":0}`},
		{name: "caller fields override defaults", schema: judgeConfigSchema, defaults: `{"model":"m","temperature":0}`, config: `{"temperature":0.5,"samples":3}`,
			want: `{"model":"m","samples":3,"temperature":0.5}`},
		{name: "null config is absent", schema: judgeConfigSchema, defaults: `{"model":"m"}`, config: `null`, want: `{"model":"m"}`},
		{name: "a required field the defaults supply is satisfied", schema: judgeConfigSchema, defaults: `{"model":"m"}`, config: `{}`, want: `{"model":"m"}`},
		{name: "unknown field names field and scorer", schema: judgeConfigSchema, defaults: `{"model":"m"}`, config: `{"temperatur":0.5}`,
			msg: []string{"open cfg", `unknown field "temperatur"`, "known: model, samples, temperature"}},
		{name: "wrong type names the field", schema: judgeConfigSchema, defaults: `{"model":"m"}`, config: `{"temperature":"hot"}`,
			msg: []string{"open cfg", "config: temperature: want number, got string"}},
		{name: "integer field given a fraction", schema: judgeConfigSchema, defaults: `{"model":"m"}`, config: `{"samples":1.5}`,
			msg: []string{"samples", "want integer, got number"}},
		{name: "out of bounds names the field", schema: judgeConfigSchema, defaults: `{"model":"m"}`, config: `{"temperature":9}`,
			msg: []string{"temperature"}},
		{name: "missing required field without default", schema: judgeConfigSchema, config: `{"temperature":1}`,
			msg: []string{`missing required field "model"`}},
		{name: "a config that is not an object", schema: judgeConfigSchema, defaults: `{"model":"m"}`, config: `[1]`,
			msg: []string{"open cfg", "want a JSON object, got an array"}},
		{name: "schema silent on extra fields still rejects unknown ones", schema: `{"type":"object","properties":{"k":{"type":"integer"}}}`, config: `{"k":1,"kk":2}`,
			msg: []string{`unknown field "kk"`}},
		{name: "schema silent on extra fields accepts known ones", schema: `{"type":"object","properties":{"k":{"type":"integer"}}}`, config: `{"k":1}`,
			want: `{"k":1}`},
		{name: "no schema accepts no config", want: `{}`},
		{name: "no schema accepts an empty object", config: ` {} `, want: `{}`},
		{name: "no schema rejects any field", config: `{"mode":"fast"}`, msg: []string{"open cfg", `unknown field "mode"`, "takes no config"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := info("cfg")
			inf.ConfigSchema = json.RawMessage(c.schema)
			inf.Defaults = json.RawMessage(c.defaults)
			r := newRig(t, inf, fixed(scored(1)))
			s, err := r.host.Open(context.Background(), "cfg", OpenOptions{Config: json.RawMessage(c.config)})
			if c.want == "" {
				if err == nil {
					s.Close(context.Background())
					t.Fatalf("Open succeeded with config %s, want an error", c.config)
				}
				if !errors.Is(err, ErrInvalidConfig) {
					t.Errorf("error %v does not wrap ErrInvalidConfig", err)
				}
				for _, m := range c.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not say %q", err, m)
					}
				}
				if r.config != nil {
					t.Errorf("the scorer was configured with %s although the config is invalid", r.config)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			if string(r.config) != c.want {
				t.Errorf("scorer configured with %s, want %s", r.config, c.want)
			}
		})
	}
}

func TestOpenCompilesConfigSchemaOnce(t *testing.T) {
	inf := info("once")
	inf.ConfigSchema = json.RawMessage(judgeConfigSchema)
	inf.Defaults = json.RawMessage(`{"model":"m"}`)
	r := newRig(t, inf, fixed(scored(1)))
	r.open(t, OpenOptions{Tenant: "a"})
	first := r.host.configs.m["once"].cs
	r.open(t, OpenOptions{Tenant: "b", Config: json.RawMessage(`{"samples":2}`)})
	if r.host.configs.m["once"].cs != first {
		t.Error("the config schema was compiled again for a second tenant")
	}
}

func TestOpenRejectsBadInfo(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*sdk.Info)
		msg    string
	}{
		{"empty range", func(i *sdk.Info) { i.Range = sdk.Range{Min: 5, Max: 5} }, "range [5, 5] is empty"},
		{"threshold above 1", func(i *sdk.Info) { i.Threshold = 70 }, "threshold 70"},
		{"negative weight", func(i *sdk.Info) { i.Dimensions = []sdk.Dimension{{Name: "a", Weight: -1}} }, `dimension "a" has weight -1`},
		{"weights sum to 0", func(i *sdk.Info) { i.Dimensions = []sdk.Dimension{{Name: "a"}} }, "weights sum to 0"},
		{"duplicate dimension", func(i *sdk.Info) { i.Dimensions = []sdk.Dimension{{Name: "a", Weight: 1}, {Name: "a", Weight: 1}} }, "declared twice"},
		{"config schema that does not compile", func(i *sdk.Info) { i.ConfigSchema = json.RawMessage(`{"type": 7}`) }, "config_schema does not compile"},
		{"config schema that references a local file", func(i *sdk.Info) { i.ConfigSchema = json.RawMessage(`{"$ref": "file:///etc/hostname"}`) }, "may not reference file:///etc/hostname"},
		{"config schema that references the network", func(i *sdk.Info) {
			i.ConfigSchema = json.RawMessage(`{"$ref": "https://example.com/s.json"}`)
		}, "may not reference https://example.com/s.json"},
		{"defaults that are not an object", func(i *sdk.Info) {
			i.ConfigSchema = json.RawMessage(`{"type":"object"}`)
			i.Defaults = json.RawMessage(`[1]`)
		}, "defaults"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := info("bad")
			c.mutate(&inf)
			r := newRig(t, inf, fixed(scored(1)))
			_, err := r.host.Open(context.Background(), "bad", OpenOptions{})
			if !errors.Is(err, ErrInvalidInfo) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v, want ErrInvalidInfo saying %q", err, c.msg)
			}
		})
	}
}

func TestOpenScale(t *testing.T) {
	cases := []struct {
		name  string
		scale *float64
		ok    bool
	}{
		{"nil", nil, true},
		{"zero", ptr(0.0), true},
		{"ten", ptr(10.0), true},
		{"negative", ptr(-1.0), false},
		{"NaN", ptr(math.NaN()), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, info("sc"), fixed(scored(1)))
			s, err := r.host.Open(context.Background(), "sc", OpenOptions{Scale: c.scale})
			if (err == nil) != c.ok {
				t.Fatalf("error %v, want ok=%v", err, c.ok)
			}
			if s != nil {
				s.Close(context.Background())
			}
		})
	}
}

// scaleSchema is the config schema of a scorer whose range the config sets.
const scaleSchema = `{"type": "object", "properties": {"scale": {"type": "object"}}, "additionalProperties": false}`

// TestConfigRange: a scorer that declares RangeConfig is normalized with the range its
// config sets, read by the host from the validated config; without the field the declared
// range applies; a field that is not a range is an invalid config naming it. Allowed and
// denied in pairs.
func TestConfigRange(t *testing.T) {
	cases := []struct {
		name      string
		config    string
		raw       float64 // what the scorer returns
		want      float64 // the normalized score; -1 means failed
		wantRange sdk.Range
		msg       string // Open fails with this
	}{
		{name: "1-5 from the config", config: `{"scale": {"min": 1, "max": 5}}`, raw: 4, want: 0.75, wantRange: sdk.Range{Min: 1, Max: 5}},
		{name: "0-100 from the config", config: `{"scale": {"min": 0, "max": 100}}`, raw: 70, want: 0.7, wantRange: sdk.Range{Min: 0, Max: 100}},
		{name: "outside the configured range is failed", config: `{"scale": {"min": 1, "max": 5}}`, raw: 7, want: -1, wantRange: sdk.Range{Min: 1, Max: 5}},
		{name: "no field keeps the declared range", config: `{}`, raw: 0.4, want: 0.4, wantRange: sdk.Unit},
		{name: "outside the declared range is failed", config: `{}`, raw: 4, want: -1, wantRange: sdk.Unit},
		{name: "min not below max", config: `{"scale": {"min": 5, "max": 5}}`, msg: "config: scale: min 5 is not below max 5"},
		{name: "not numbers", config: `{"scale": {"min": "1", "max": 5}}`, msg: `config: scale: the scorer reads its range here: want numbers "min" and "max"`},
		{name: "not an object", config: `{"scale": {}}`, msg: `config: scale: the scorer reads its range here: want numbers "min" and "max"`},
		{name: "a span too wide for floats", config: `{"scale": {"min": -1e308, "max": 1e308}}`, msg: "range [-1e+308, 1e+308] is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := info("scaled")
			inf.Range, inf.RangeConfig, inf.ConfigSchema = sdk.Unit, "/scale", json.RawMessage(scaleSchema)
			r := newRig(t, inf, fixed(sdk.Scored(c.raw, "raw")))
			s, err := r.host.Open(context.Background(), "scaled", OpenOptions{Config: json.RawMessage(c.config)})
			if c.msg != "" {
				if err == nil || !strings.Contains(err.Error(), c.msg) {
					t.Fatalf("err %v, want %q", err, c.msg)
				}
				if !errors.Is(err, ErrInvalidConfig) && !errors.Is(err, ErrInvalidInfo) {
					t.Fatalf("err %v wraps neither ErrInvalidConfig nor ErrInvalidInfo", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			if got := s.Info().Range; got != c.wantRange {
				t.Errorf("Info().Range = %v, want %v", got, c.wantRange)
			}
			res := s.Score(context.Background(), sdk.Run{Input: "q", Output: "a"})
			if c.want < 0 {
				if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeInvalidResult {
					t.Fatalf("result %+v, want failed invalid_result", res)
				}
				return
			}
			if res.Status != sdk.StatusScored || math.Abs(*res.Score-c.want) > 1e-9 {
				t.Fatalf("result %+v, want scored %v", res, c.want)
			}
		})
	}
}

// TestConfigRangeIsAPointer: a RangeConfig that is not a JSON Pointer is the scorer's
// fault, refused at Open.
func TestConfigRangeIsAPointer(t *testing.T) {
	inf := info("scaled")
	inf.RangeConfig, inf.ConfigSchema = "scale", json.RawMessage(scaleSchema)
	r := newRig(t, inf, fixed(sdk.Scored(0.5, "")))
	_, err := r.host.Open(context.Background(), "scaled", OpenOptions{})
	if !errors.Is(err, ErrInvalidInfo) || !strings.Contains(err.Error(), `range_config "scale": want a JSON Pointer`) {
		t.Fatalf("err %v", err)
	}
}

// TestConfigureRefusalIsAnInvalidConfig: a config the native scorer refuses is an invalid
// config, as in the WASM and process runtimes.
func TestConfigureRefusalIsAnInvalidConfig(t *testing.T) {
	reg := NewRegistry()
	if err := reg.Register(Native(func() sdk.Scorer { return refuser{testkit.Scorer{Meta: info("refuser")}} }), false); err != nil {
		t.Fatal(err)
	}
	_, err := New(reg).Open(context.Background(), "refuser", OpenOptions{})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "configure refuser: no, thanks") {
		t.Fatalf("err %v, want an invalid config with the scorer's reason", err)
	}
}

// refuser is a scorer that refuses every config.
type refuser struct{ testkit.Scorer }

func (refuser) Configure(json.RawMessage) error { return errors.New("no, thanks") }
