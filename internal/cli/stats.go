package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
)

// runStats is what `score --stats` reports on stderr after the output: how long the lines
// took and what scoring them held, the process plugins' processes counted with the
// command's own memory (a host's getrusage leaves its children out).
type runStats struct {
	Lines   int
	Elapsed time.Duration
	CPU     time.Duration // the command's user + system time; 0 where unknown
	PeakRSS int64         // the command's peak resident set, bytes; 0 where unknown
	Plugins process.Usage // the process plugins' processes and resident memory, now
}

func collectStats(lines int, elapsed time.Duration, reg *host.Registry) runStats {
	st := runStats{Lines: lines, Elapsed: elapsed}
	st.CPU, st.PeakRSS = selfUsage()
	var ps []host.Plugin
	for _, n := range reg.Names() {
		if p, err := reg.Lookup(n); err == nil {
			ps = append(ps, p)
		}
	}
	st.Plugins = process.UsageOf(ps)
	return st
}

func (st runStats) write(w io.Writer) {
	rate := 0.0
	if st.Elapsed > 0 {
		rate = float64(st.Lines) / st.Elapsed.Seconds()
	}
	fmt.Fprintf(w, "stats: %d line(s) in %s (%.0f lines/s)", st.Lines, st.Elapsed.Round(time.Millisecond), rate)
	if st.CPU > 0 {
		fmt.Fprintf(w, ", CPU %s (the whole command)", st.CPU.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	mem := "unknown"
	if st.PeakRSS > 0 {
		mem = fmt.Sprintf("%.0f MiB peak", float64(st.PeakRSS)/(1<<20))
	}
	fmt.Fprintf(w, "stats: memory: scorekit %s", mem)
	if st.Plugins.Processes > 0 {
		fmt.Fprintf(w, " + process plugins %.0f MiB in %d process(es) = %.0f MiB",
			float64(st.Plugins.RSSBytes)/(1<<20), st.Plugins.Processes, float64(st.PeakRSS+st.Plugins.RSSBytes)/(1<<20))
	}
	fmt.Fprintln(w)
}
