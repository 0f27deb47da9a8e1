package prescreen

import (
	"strconv"
	"strings"
)

// What the caller recorded about how a run ended is definitive: a model that stopped at its
// token limit was cut off whatever its last word, a provider that filtered the answer refused
// it, and a framework that recorded an error failed. The keys, as the providers and
// frameworks name them, are documented on sdk.Run's Metadata field.

// callerEnd is how the caller says a run ended.
type callerEnd int

const (
	endUnknown   callerEnd = iota // no signal, or one that says nothing wrong ("stop", "end_turn")
	endTruncated                  // the model stopped at its token limit
	endRefused                    // the provider's safety system refused or filtered the answer
	endErrored                    // the framework recorded an error or a failed status
	endFinished                   // the model ended its answer itself ("stop", "end_turn", "STOP")
)

// finishKeys are the metadata keys that carry a model's stop reason: OpenAI and most
// OpenAI-compatible servers (finish_reason), Anthropic (stop_reason), Gemini and the Vercel AI
// SDK (finishReason), Bedrock's Converse API (stopReason).
var finishKeys = [...]string{"finish_reason", "stop_reason", "finishReason", "stopReason"}

// readCallerEnd reads the stop reason, error and status the caller recorded in metadata.
// Absent keys, and values it does not know, change nothing.
func readCallerEnd(md map[string]any) (callerEnd, string) {
	if len(md) == 0 {
		return endUnknown, ""
	}
	if v, ok := md["error"]; ok && present(v) {
		return endErrored, "the caller recorded an error" + quoteShort(v)
	}
	if s, ok := md["status"].(string); ok {
		switch normalizeReason(s) {
		case "error", "errored", "failed", "failure", "fail", "timeout", "timed_out", "crashed", "exception":
			return endErrored, "the caller recorded status " + strconv.Quote(s)
		}
	}
	for _, k := range finishKeys {
		s, ok := md[k].(string)
		if !ok {
			continue
		}
		switch normalizeReason(s) {
		case "length", "max_tokens", "max_output_tokens", "model_length", "token_limit", "max_length":
			return endTruncated, "the model stopped at its token limit (" + k + " " + strconv.Quote(s) + ")"
		case "content_filter", "content_filtered", "refusal", "safety", "prohibited_content", "blocklist", "spii",
			"guardrail_intervened", "error_toxic", "image_safety":
			return endRefused, "the provider refused or filtered the answer (" + k + " " + strconv.Quote(s) + ")"
		case "error":
			return endErrored, "the model call ended in an error (" + k + " " + strconv.Quote(s) + ")"
		case "stop", "end_turn", "stop_sequence", "eos", "eos_token", "complete", "completed", "finished", "end":
			// The model ended the answer itself: a last word that reads as cut off is its
			// own choice ("stop" at a stop sequence included), not the token limit's.
			return endFinished, ""
		}
	}
	return endUnknown, ""
}

// normalizeReason lower-cases a stop reason and spells it with underscores, so "MAX_TOKENS",
// "max-tokens" and "content-filter" read as the documented values.
func normalizeReason(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.ReplaceAll(s, "-", "_")
}

// present reports whether a metadata value carries something: not null, false, "" or empty.
func present(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return strings.TrimSpace(x) != ""
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

func quoteShort(v any) string {
	s, ok := v.(string)
	if !ok {
		if m, isMap := v.(map[string]any); isMap {
			s, _ = m["message"].(string)
		}
	}
	if s == "" {
		return ""
	}
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return ": " + strconv.Quote(s)
}

// GrossFailure reports whether a run's output is broken beyond any judging: empty
// (FlagEmptyOutput), or an error message, a stack trace or a provider failure where an answer
// should be, or an error the caller recorded in metadata (FlagErrorText). A caller about to
// pay for a judge calls it first and records the flag instead. It reads only evidence that
// holds without the input: an answer that explains an error the user pasted can open like an
// error, so callers that have the whole run should prefer the prescreen scorer, which checks
// the input too. It costs about what the prescreen does (microseconds) and does not allocate
// for outputs that pass.
func GrossFailure(output string, metadata map[string]any) (flag string, ok bool) {
	out := strings.TrimSpace(output)
	if out == "" {
		return FlagEmptyOutput, true
	}
	if end, _ := readCallerEnd(metadata); end == endErrored {
		return FlagErrorText, true
	}
	var st screenText
	st.fill("", out, "")
	if _, ok := findErrorText(&st); ok {
		return FlagErrorText, true
	}
	return "", false
}
