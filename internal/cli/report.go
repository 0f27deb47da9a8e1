package cli

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// resultSink receives scored lines in input order.
type resultSink interface {
	add(scoredLine) error
	// finish writes what is left; interrupted says the lines added are not all of them.
	finish(interrupted bool) error
}

// jsonlSink writes one record per (run, scorer) (see appendRecord), flushing after each
// batch of lines the line scorer hands over in a row, so a consumer reading a pipe sees
// results as they are ready.
type jsonlSink struct {
	w     io.Writer
	buf   []byte
	names []string
	steps bool
}

func newJSONLSink(w io.Writer, names []string, steps bool) *jsonlSink {
	return &jsonlSink{w: w, names: names, steps: steps}
}

// prepare encodes l's records; it runs on the worker that scored l.
func (s *jsonlSink) prepare(l *scoredLine, buf []byte) ([]byte, error) {
	var err error
	for i := range l.results {
		if buf, err = appendRecord(buf, l, s.names[i], &l.results[i], s.steps); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func (s *jsonlSink) add(l scoredLine) error {
	if l.prepErr != nil {
		return l.prepErr
	}
	if l.encoded == nil {
		var err error
		if l.encoded, err = s.prepare(&l, nil); err != nil {
			return err
		}
	}
	s.buf = append(s.buf, l.encoded...)
	if len(s.buf) >= 64<<10 {
		return s.flush()
	}
	return nil
}

// idle is called when the line scorer has no more lines ready: what is buffered goes out.
func (s *jsonlSink) idle() error { return s.flush() }

func (s *jsonlSink) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.w.Write(s.buf)
	s.buf = s.buf[:0]
	return err
}

func (s *jsonlSink) finish(bool) error { return s.flush() }

// scorerStats aggregates one scorer's results for the table.
type scorerStats struct {
	name                   string
	runs, scored, passedN  int
	judged                 int // scored results that carry Passed
	failed, skipped        int
	sum                    float64
	worst                  []runNote // lowest scores first, at most maxWorst
	failures               []runNote // first maxFailures failed results
	moreFailures, maxWorst int
	// noJudge: the scorer needs an LLM judge and the command has none, so it scored only
	// what needs no judge (an empty output, an error in place of an answer) and skipped the
	// rest; a mean of that would read as the scorer's verdict, so the table leaves it out.
	noJudge bool
	// skips counts skipped results by reason, in order of first appearance, so that a
	// scorer that skipped everything says why (often: how to configure a judge).
	skips      []reasonCount // at most maxSkipReasons
	otherSkips int           // skipped runs whose reason did not fit in skips
}

type reasonCount struct {
	reason string
	n      int
}

// runNote is what the table shows about one run.
type runNote struct {
	line   int
	runID  string
	score  float64
	flags  []string
	reason string
}

// How many failed runs and distinct skip reasons the table lists per scorer.
const (
	maxFailures    = 10
	maxSkipReasons = 5
)

// tableSink prints a summary per scorer once every line is in.
type tableSink struct {
	w     io.Writer
	stats []*scorerStats
}

// newTableSink returns a table of names' results listing worst runs per scorer; noJudge,
// when set, marks the scorers that need a judge the command does not have.
func newTableSink(w io.Writer, names []string, worst int, noJudge []bool) *tableSink {
	t := &tableSink{w: w}
	for i, n := range names {
		t.stats = append(t.stats, &scorerStats{name: n, maxWorst: worst, noJudge: i < len(noJudge) && noJudge[i]})
	}
	return t
}

func (t *tableSink) add(l scoredLine) error {
	for i, r := range l.results {
		t.stats[i].add(l, r)
	}
	return nil
}

func (s *scorerStats) add(l scoredLine, r sdk.Result) {
	s.runs++
	switch r.Status {
	case sdk.StatusScored:
		s.scored++
		v := r.Value()
		s.sum += v
		if r.Passed != nil {
			s.judged++
			if *r.Passed {
				s.passedN++
			}
		}
		// A run that passed is not a low score, however few runs failed.
		if r.Passed == nil || !*r.Passed {
			s.keepWorst(runNote{line: l.line, runID: l.runID, score: v, flags: r.Flags, reason: r.Reason})
		}
	case sdk.StatusSkipped:
		s.skipped++
		s.countSkip(r.Reason)
	default:
		s.failed++
		if len(s.failures) >= maxFailures {
			s.moreFailures++
			return
		}
		msg := r.Reason
		if r.Error != nil {
			msg = r.Error.Error()
		}
		s.failures = append(s.failures, runNote{line: l.line, runID: l.runID, reason: msg})
	}
}

func (s *scorerStats) countSkip(reason string) {
	for i := range s.skips {
		if s.skips[i].reason == reason {
			s.skips[i].n++
			return
		}
	}
	if len(s.skips) == maxSkipReasons {
		s.otherSkips++
		return
	}
	s.skips = append(s.skips, reasonCount{reason: reason, n: 1})
}

// keepWorst keeps the maxWorst lowest scores; ties keep the earlier line.
func (s *scorerStats) keepWorst(n runNote) {
	i, _ := slices.BinarySearchFunc(s.worst, n, func(a, b runNote) int {
		if a.score <= b.score {
			return -1
		}
		return 1
	})
	if i >= s.maxWorst {
		return
	}
	s.worst = slices.Insert(s.worst, i, n)
	if len(s.worst) > s.maxWorst {
		s.worst = s.worst[:s.maxWorst]
	}
}

func (t *tableSink) finish(interrupted bool) error {
	bw := bufio.NewWriter(t.w)
	if interrupted {
		fmt.Fprintln(bw, "Interrupted: a partial summary of the lines scored before the interruption.")
		fmt.Fprintln(bw)
	}
	tw := newTable(bw)
	fmt.Fprintln(tw, "SCORER\tRUNS\tSCORED\tMEAN\tPASS RATE\tFAILED\tSKIPPED")
	for _, s := range t.stats {
		mean, pass := ratio(s.sum, s.scored, "%.2f"), ratio(float64(s.passedN)*100, s.judged, "%.0f%%")
		if s.noJudge {
			mean, pass = "no judge", "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%d\n", s.name, s.runs, s.scored, mean, pass, s.failed, s.skipped)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(bw, "\nMean and pass rate count scored results only; failed and skipped runs are never scores of 0.")
	for _, s := range t.stats {
		if s.noJudge {
			// In place of its lowest scores and skip reasons: it did not run, and why.
			fmt.Fprintf(bw, "\n%s: did not run, for want of an LLM judge\n  %s.\n", s.name, sdk.NoJudge(s.name).Reason)
			if s.scored > 0 {
				fmt.Fprintf(bw, "  Without one it scored only the %d run(s) it grades without a call (an empty output, an error in place of an answer); "+
					"their mean is not its verdict on the runs, so MEAN and PASS RATE are left out.\n", s.scored)
			}
		}
		if len(s.worst) > 0 && !s.noJudge {
			fmt.Fprintf(bw, "\n%s: lowest scores\n", s.name)
			for _, n := range s.worst {
				fmt.Fprintf(bw, "  %-6.2f %s (line %d)", n.score, n.runID, n.line)
				if len(n.flags) > 0 {
					fmt.Fprintf(bw, " [%s]", strings.Join(n.flags, ", "))
				}
				if n.reason != "" {
					fmt.Fprintf(bw, ": %s", oneLine(n.reason, 120))
				}
				fmt.Fprintln(bw)
			}
		}
		if len(s.failures) > 0 {
			fmt.Fprintf(bw, "\n%s: failed\n", s.name)
			for _, n := range s.failures {
				fmt.Fprintf(bw, "  %s (line %d): %s\n", n.runID, n.line, oneLine(n.reason, 160))
			}
			if s.moreFailures > 0 {
				fmt.Fprintf(bw, "  ... and %d more (use --format jsonl for all)\n", s.moreFailures)
			}
		}
		skips := s.skips
		if s.noJudge { // the note above says why those were skipped
			noJudge := sdk.NoJudge(s.name).Reason
			skips = slices.DeleteFunc(slices.Clone(skips), func(c reasonCount) bool { return c.reason == noJudge })
		}
		if len(skips) > 0 {
			fmt.Fprintf(bw, "\n%s: skipped\n", s.name)
			for _, c := range skips {
				fmt.Fprintf(bw, "  %d run(s): %s\n", c.n, oneLine(c.reason, 240))
			}
			if s.otherSkips > 0 {
				fmt.Fprintf(bw, "  ... and %d more run(s) skipped for other reasons (use --format jsonl for all)\n", s.otherSkips)
			}
		}
	}
	return bw.Flush()
}

// ratio formats sum/n, or "-" when there is nothing to average.
func ratio(sum float64, n int, format string) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf(format, sum/float64(n))
}

// oneLine collapses white space and cuts s to max runes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
