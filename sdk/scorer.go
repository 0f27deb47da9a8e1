package sdk

import (
	"context"
	"encoding/json"
)

// ABIVersion is the version of the contract a scorer was built against. The host refuses
// a scorer whose Info declares another major version.
const ABIVersion = 1

// Scorer grades runs. See the package documentation for the lifecycle.
type Scorer interface {
	// Info describes the scorer. It is called once and must not change.
	Info() Info
	// Score grades call.Run. A returned error becomes a failed result with the error's
	// message (and its code when it is an *Error); it is never a score of 0.
	Score(ctx context.Context, call Call) (Result, error)
}

// Configurer is implemented by scorers that take a config. The host validates the config
// against Info.ConfigSchema and merges Info.Defaults under it before calling Configure.
type Configurer interface {
	Configure(config json.RawMessage) error
}

// Call is one scoring request.
type Call struct {
	// Run is what to grade. The host has validated it and numbered its context passages;
	// for scorers with a grounding dimension (faithfulness, hallucination_free) it has
	// filled Run.CitationAudit.
	Run Run
	// Judge gives LLM access through the host. Nil when no judge is configured or the
	// scorer did not declare the judge capability; return [NoJudge] then.
	Judge Judge
}

// Range is a closed interval of scores.
type Range struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Unit is the range every score has after the host: [0, 1].
var Unit = Range{Min: 0, Max: 1}

// Capability is something a scorer needs from the host.
type Capability string

// Capabilities a scorer may declare.
const (
	// CapJudge: chat completions through the host's judge broker.
	CapJudge Capability = "judge"
	// CapEmbed: embeddings through the host's judge broker.
	CapEmbed Capability = "embed"
)

// Dimension is a named sub-score and its weight in the overall score.
type Dimension struct {
	Name        string  `json:"name"`
	Weight      float64 `json:"weight" jsonschema:"minimum=0"`
	Description string  `json:"description,omitempty"`
}

// Info describes a scorer: what it measures, on which scale, and what it needs.
type Info struct {
	// Name is how users select the scorer (lower case, digits, '_' and '-').
	Name string `json:"name" jsonschema:"pattern=^[a-z][a-z0-9_-]*$"`
	// Version of the scorer (semver).
	Version string `json:"version"`
	// ABIVersion is the contract version the scorer was built against: [ABIVersion].
	ABIVersion int `json:"abi_version"`
	// Description says what the scorer measures, in one or two sentences.
	Description string `json:"description"`
	// Range is the native range of Score and Dimensions (0-1, 0-100, 1-5 ...).
	// Optional. Default is 0-1.
	Range Range `json:"range"`
	// RangeConfig says where the native range is when the caller's config sets it (a
	// rubric's 1-5 or 0-100 scale): a JSON Pointer (RFC 6901) into the config to an object
	// {"min", "max"}, e.g. "/scale". The host reads it from the config it validated, before
	// the first Score, and normalizes with it; a config without that field keeps Range.
	// Optional.
	RangeConfig string `json:"range_config,omitempty" jsonschema:"pattern=^(/[^/]+)+$"`
	// Dimensions, with weights. When present the host recomputes the overall score as
	// their weighted mean. Optional.
	Dimensions []Dimension `json:"dimensions,omitempty"`
	// Threshold is the normalized score (0-1) at or above which a run passes.
	Threshold float64 `json:"threshold"`
	// Decimals is how many decimals the host rounds the score to. Optional. Default is 2.
	Decimals int `json:"decimals,omitempty" jsonschema:"minimum=0,maximum=6"`
	// ConfigSchema is the JSON Schema of the scorer's config. Optional: a scorer without one
	// accepts only an empty config.
	ConfigSchema json.RawMessage `json:"config_schema,omitempty"`
	// Defaults is the config used for fields the caller leaves out. Optional.
	Defaults json.RawMessage `json:"defaults,omitempty"`
	// Capabilities the scorer needs from the host.
	Capabilities []Capability `json:"capabilities,omitempty"`
}

// Has reports whether the scorer declared capability c.
func (i *Info) Has(c Capability) bool {
	for _, d := range i.Capabilities {
		if d == c {
			return true
		}
	}
	return false
}

// Dimension returns the dimension called name.
func (i *Info) Dimension(name string) (Dimension, bool) {
	for _, d := range i.Dimensions {
		if d.Name == name {
			return d, true
		}
	}
	return Dimension{}, false
}
