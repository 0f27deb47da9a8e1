// Package ingest turns the logs agents leave behind into scorekit runs: OpenAI chat
// completion and Responses API records, Anthropic Messages records, and OpenTelemetry
// spans that follow the GenAI semantic conventions. `scorekit convert` writes what it
// makes as JSONL runs; the service reads with the same code, so a log is read one way.
//
// # One run per agent turn
//
// An agent that uses tools calls its model several times for one user turn: a round that
// asks for tool calls, the tools' results sent back, the final answer. A log records each
// call. Runs are made per turn: the rounds of one turn, linked by the conversation they
// extend (a round's request holds the previous round's conversation, its reply and the
// tool results), or by the Responses API's previous_response_id, become one run whose
// output is every assistant and tool turn after the user's message. A round that nothing
// links to a final answer (the log ends, or was cut) is still a run, judged on its calls.
//
// # Logs as they are
//
// A converter reads a stream of records and calls emit for each run it makes. A record it
// cannot read (not JSON, a log cut off mid-write, a shape it does not know) is reported
// to Options.OnError with its number (1-based) and the reason, skipped, and every other
// record is still converted; without OnError the first such record ends the conversion.
// The model, token usage, latency and finish or stop reason go to the run's metadata,
// under the keys the pre-screen reads; a call or agent that ended in an error becomes a
// run whose metadata records the error, so the pre-screen and the insights see it.
package ingest

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Options say how to convert.
type Options struct {
	// Agent names the agent on every run that does not name one itself. Optional.
	Agent string
	// OnError is told about each record that could not be converted, which is then
	// skipped. Optional. Default is nil: the first such record is the conversion's error.
	OnError func(record int, err error)

	// Logs is an OTLP/JSON logs export read beside the traces (otel-genai): the GenAI
	// events that instrumentations record as log records, joined to their spans. Optional.
	Logs io.Reader

	seen    func(record int) // counts records for Convert's summary
	ignored func(n int)      // counts what was read and joins nothing, for the summary
}

// Summary counts what a conversion read and wrote.
type Summary struct {
	// Records is how many records were read, good and bad.
	Records int
	// Runs is how many runs were made; the rounds of one turn make one.
	Runs int
	// Skipped is how many records (or, in traces, spans) could not be converted and were
	// reported.
	Skipped int
	// Ignored is how many log records (otel-genai) had no trace or span id: they join no
	// span and are not read.
	Ignored int
}

// Formats lists the formats Convert reads, by the names the command line takes.
var Formats = []string{FormatOpenAIChat, FormatOpenAIResponses, FormatAnthropic, FormatOTelGenAI}

// The formats.
const (
	// FormatOpenAIChat: OpenAI chat completion logs (see [OpenAIChat]).
	FormatOpenAIChat = "openai-chat"
	// FormatOpenAIResponses: OpenAI Responses API logs (see [OpenAIResponses]).
	FormatOpenAIResponses = "openai-responses"
	// FormatAnthropic: Anthropic Messages API logs (see [AnthropicMessages]).
	FormatAnthropic = "anthropic-messages"
	// FormatOTelGenAI: OpenTelemetry traces with GenAI spans (see [OTelGenAI]).
	FormatOTelGenAI = "otel-genai"
)

// ErrNoRuns is returned when the input held no record at all.
var ErrNoRuns = errors.New("no records")

// Convert reads r in format, calls emit for each run and says what it read and wrote.
func Convert(format string, r io.Reader, o Options, emit func(sdk.Run) error) (Summary, error) {
	var sum Summary
	o.seen = func(n int) { sum.Records = max(sum.Records, n) }
	o.ignored = func(n int) { sum.Ignored += n }
	if onError := o.OnError; onError != nil {
		o.OnError = func(n int, err error) {
			sum.Skipped++
			onError(n, err)
		}
	}
	counted := func(r sdk.Run) error {
		sum.Runs++
		return emit(r)
	}
	var err error
	switch format {
	case FormatOpenAIChat:
		err = OpenAIChat(r, o, counted)
	case FormatOpenAIResponses:
		err = OpenAIResponses(r, o, counted)
	case FormatAnthropic:
		err = AnthropicMessages(r, o, counted)
	case FormatOTelGenAI:
		err = OTelGenAI(r, o, counted)
	default:
		err = fmt.Errorf("ingest: unknown format %q (known: %s)", format, strings.Join(Formats, ", "))
	}
	return sum, err
}

// report hands a record's error to OnError, or returns it when there is none.
func (o *Options) report(n int, err error) error {
	if o.OnError == nil {
		return fmt.Errorf("record %d: %w", n, err)
	}
	o.OnError(n, err)
	return nil
}
