package prescreen_test

import (
	"testing"

	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

func TestToolCallFailed(t *testing.T) {
	for _, c := range []struct {
		name, result string
		failed       bool
	}{
		{"no result recorded", "", false},
		{"a result", `{"cancelled":true}`, false},
		{"an error object", `{"error":{"code":404,"message":"no such event"}}`, true},
		{"a null error", `{"error":null,"events":[]}`, false},
		{"Anthropic's is_error", `{"is_error":true,"content":"rate limited"}`, true},
		{"success false", `{"success":false,"message":"quota exceeded"}`, true},
		{"an error message", "Error: connect ECONNREFUSED 127.0.0.1:5432", true},
		{"a traceback", "Traceback (most recent call last):\n  File \"tool.py\", line 3, in run\nKeyError: 'time'", true},
		{"plain text", "3 events found: standup, review, 1:1", false},
		{"an empty list", "[]", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := prescreen.ToolCallFailed(sdk.ToolCall{Name: "tool", Result: c.result}); got != c.failed {
				t.Errorf("failed %v, want %v", got, c.failed)
			}
		})
	}
}
