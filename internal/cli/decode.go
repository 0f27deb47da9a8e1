package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scorekit/scorekit/sdk"
)

// decodeRun decodes one dataset line and says what is wrong with it, naming the field.
// TODO(host): replace with host.DecodeRun, which validates against schemas/run.schema.json.
func decodeRun(line []byte) (sdk.Run, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return sdk.Run{}, fmt.Errorf("want a JSON object (one run per line), got %s", te.Value)
		}
		return sdk.Run{}, fmt.Errorf("invalid JSON: %v", err)
	}
	if _, ok := fields["output"]; !ok {
		return sdk.Run{}, fmt.Errorf("missing required field \"output\" (what the agent answered; may be \"\")")
	}
	var run sdk.Run
	if err := json.Unmarshal(line, &run); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return sdk.Run{}, fmt.Errorf("field %q: want %s, got %s", te.Field, te.Type, te.Value)
		}
		return sdk.Run{}, err
	}
	if err := run.Validate(); err != nil {
		return sdk.Run{}, err
	}
	return run, nil
}
