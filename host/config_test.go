package host

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

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
