// Package convert turns the logs agents leave behind into scorekit runs: OpenAI chat
// completion logs and OpenTelemetry GenAI spans. `scorekit convert` writes what it makes as
// JSONL runs, and the service imports through it, so both read logs the same way.
//
// A converter reads a stream of records and calls emit for each run it makes, in order. A
// record it cannot read is reported to Options.OnError with its number (1-based) and
// skipped; without OnError the first such record ends the conversion.
package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
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
}

// Formats lists the formats Convert reads, by the names the command line takes.
var Formats = []string{FormatOpenAIChat, FormatOTelGenAI}

// The formats.
const (
	// FormatOpenAIChat: OpenAI chat completion logs (see [OpenAIChat]).
	FormatOpenAIChat = "openai-chat"
	// FormatOTelGenAI: OpenTelemetry traces with GenAI spans (see [OTelGenAI]).
	FormatOTelGenAI = "otel-genai"
)

// ErrNoRuns is returned when the input held no record at all.
var ErrNoRuns = errors.New("no records")

// Convert reads r in format and calls emit for each run.
func Convert(format string, r io.Reader, o Options, emit func(sdk.Run) error) error {
	switch format {
	case FormatOpenAIChat:
		return OpenAIChat(r, o, emit)
	case FormatOTelGenAI:
		return OTelGenAI(r, o, emit)
	}
	return fmt.Errorf("convert: unknown format %q (known: %s)", format, strings.Join(Formats, ", "))
}

// records calls f with each JSON value of r: JSON Lines, concatenated JSON documents, or
// one JSON array whose elements are the records. A UTF-8 byte order mark is skipped.
func records(r io.Reader, f func(n int, raw json.RawMessage) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	dec := json.NewDecoder(br)
	n := 0
	array := false
	if tok, err := peekDelim(dec, br); err == nil && tok == '[' {
		if _, err := dec.Token(); err != nil {
			return err
		}
		array = true
	}
	for {
		if array && !dec.More() {
			if _, err := dec.Token(); err != nil { // ]
				return fmt.Errorf("record %d: %w", n+1, err)
			}
			array = false
			continue
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		n++
		if err != nil {
			return fmt.Errorf("record %d: not JSON: %w", n, err)
		}
		if err := f(n, raw); err != nil {
			return err
		}
	}
	if n == 0 {
		return ErrNoRuns
	}
	return nil
}

// peekDelim returns the first non-space byte of the input without consuming it.
func peekDelim(_ *json.Decoder, br *bufio.Reader) (byte, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return 0, err
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
			continue
		default:
			return c, nil
		}
	}
}

// report hands a record's error to OnError, or returns it when there is none.
func (o *Options) report(n int, err error) error {
	if o.OnError == nil {
		return fmt.Errorf("record %d: %w", n, err)
	}
	o.OnError(n, err)
	return nil
}

// splitOutput splits a conversation into what the agent was given and what it answered:
// the agent's turns (assistant and tool messages) after the last user turn. Other turns
// there (a system message a framework injected) stay with the input.
func splitOutput(turns []sdk.Turn) (input, output []sdk.Turn) {
	last := -1
	for i, t := range turns {
		if t.Role == "user" {
			last = i
		}
	}
	input = append(input, turns[:last+1]...)
	for _, t := range turns[last+1:] {
		switch t.Role {
		case "assistant", "tool", "function":
			output = append(output, t)
		default:
			input = append(input, t)
		}
	}
	return input, output
}

// runFromTurns builds a run from its input and output turns with the same rules as
// sdk.Run.UnmarshalJSON, by handing them to it.
func runFromTurns(input, output []sdk.Turn) (sdk.Run, error) {
	var doc struct {
		Input  []sdk.Turn `json:"input"`
		Output []sdk.Turn `json:"output"`
	}
	doc.Input, doc.Output = input, output
	if doc.Input == nil {
		doc.Input = []sdk.Turn{}
	}
	if doc.Output == nil {
		doc.Output = []sdk.Turn{}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return sdk.Run{}, err
	}
	var r sdk.Run
	err = json.Unmarshal(b, &r)
	return r, err
}
