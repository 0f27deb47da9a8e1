// Package verdict extracts the JSON object a judge meant to return from the text it
// actually returned.
package verdict

import "encoding/json"

// Extract finds the JSON object in text and decodes it into v.
func Extract(text string, v any) error {
	// Placeholder until the robust extractor lands.
	return json.Unmarshal([]byte(text), v)
}
