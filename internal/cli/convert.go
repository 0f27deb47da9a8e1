package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/ingest"
	"github.com/scorekit/scorekit/sdk"
)

func (e *env) convertCommand() *cobra.Command {
	var from, agent, out, logs string
	cmd := &cobra.Command{
		Use:   "convert --from FORMAT [flags] FILE|-",
		Short: "Turn agent logs (OpenAI, Anthropic, OpenTelemetry GenAI spans) into JSONL runs",
		Long: `Convert logs into runs, one JSON object per line, ready for scorekit score:

  openai-chat         OpenAI chat completion logs: {"request": {...}, "response": {...}}
                      records (what a logging proxy records) or {"messages": [...]}
                      conversations.
  openai-responses    OpenAI Responses API logs: {"request": {...}, "response": {...}}.
  anthropic-messages  Anthropic Messages API logs: {"request": {...}, "response": {...}}.
  otel-genai          OpenTelemetry traces in OTLP JSON (the Collector's file exporter)
                      whose spans follow the GenAI semantic conventions, as attributes or
                      span events, and of OpenInference, OpenLLMetry, the AI SDK and
                      Mastra: one run per agent span, else per call span of an agent
                      framework (ai.generateText, a root CHAIN, a workflow), else per
                      turn of model calls. --logs FILE reads an OTLP JSON logs export
                      beside it: the GenAI events instrumentations record as log records.

Records are JSON Lines, JSON documents or one array. One agent turn is one run: the model
calls of a turn (tool-call rounds and the final answer, linked by the conversation they
extend) are joined. A conversation becomes the run's input (its last user turn is the
question, every turn is kept), the agent's turns its output and tool calls; the model,
finish or stop reason, token usage, latency and any error go to metadata, so a call or an
agent that failed is a run the pre-screen flags. A record that cannot be converted (a log
cut off mid-write) is reported on stderr with its number and reason and skipped, the others
are converted, and a summary counts both; the exit status is then 2.`,
		Example: `  scorekit convert --from openai-chat chat-logs.jsonl > runs.jsonl
  scorekit convert --from otel-genai --out runs.jsonl traces.json
  scorekit convert --from otel-genai --logs logs.jsonl traces.jsonl
  scorekit convert --from otel-genai traces.json | scorekit score -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if !slices.Contains(ingest.Formats, from) {
				return fmt.Errorf("convert: --from %q: want %s", from, strings.Join(ingest.Formats, ", "))
			}
			in, inName, _, err := e.openInput(args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			w, closeOut, err := e.openOutput(out)
			if err != nil {
				return err
			}
			defer func() {
				if cerr := closeOut(); cerr != nil && err == nil {
					err = fmt.Errorf("convert: write %s: %w", out, cerr)
				}
			}()
			opts := ingest.Options{Agent: agent, OnError: func(n int, err error) {
				fmt.Fprintf(e.stderr, "%s: record %d: %v\n", inName, n, err)
			}}
			if logs != "" {
				if from != ingest.FormatOTelGenAI {
					return fmt.Errorf("convert: --logs reads OTLP log records, which only --from %s joins to spans", ingest.FormatOTelGenAI)
				}
				lf, _, _, err := e.openInput(logs)
				if err != nil {
					return err
				}
				defer lf.Close()
				opts.Logs = lf
			}
			var buf []byte
			sum, err := ingest.Convert(from, in, opts, func(r sdk.Run) error {
				b, err := json.Marshal(r)
				if err != nil {
					return err
				}
				buf = append(append(buf[:0], b...), '\n')
				_, err = w.Write(buf)
				return err
			})
			switch {
			case errors.Is(err, ingest.ErrNoRuns):
				return fmt.Errorf("%w: %s has no records (it is empty or blank)", errBadInput, inName)
			case err != nil:
				return fmt.Errorf("%w: convert %s: %v", errBadInput, inName, err)
			}
			fmt.Fprintf(e.stderr, "%s: %d records read, %d runs written, %d skipped\n", inName, sum.Records, sum.Runs, sum.Skipped)
			if sum.Ignored > 0 {
				fmt.Fprintf(e.stderr, "%s: %d log record(s) ignored: no trace or span id, so no span to join\n", inName, sum.Ignored)
			}
			if sum.Skipped > 0 {
				return fmt.Errorf("%w: %d record(s) or span(s) of %s could not be converted (see above); the %d run(s) of the others are written", errBadInput, sum.Skipped, inName, sum.Runs)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the logs' format: "+strings.Join(ingest.Formats, ", "))
	f.StringVar(&agent, "agent", "", "agent name for runs whose logs do not name one")
	f.StringVarP(&out, "out", "o", "", "write the runs to FILE instead of stdout")
	f.StringVar(&logs, "logs", "", "an OTLP JSON logs export to read beside the traces (--from otel-genai): GenAI events recorded as log records")
	return cmd
}
