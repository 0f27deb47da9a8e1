package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// defaultScorer is what `score` runs without --scorers: the pre-screen needs no judge, so
// the default works offline and costs nothing.
const defaultScorer = "prescreen"

// scoreOptions are the flags of `scorekit score`.
type scoreOptions struct {
	scorers     []string
	format      string
	out         string
	scale       float64
	scaleSet    bool
	config      string
	timeout     time.Duration
	concurrency int
	steps       bool
	worst       int
	judge       judgeConfig
	plugins     []string
	runtime     string
	failUnder   []string
	maxFailed   string
	stats       bool
}

func (e *env) scoreCommand() *cobra.Command {
	var o scoreOptions
	cmd := &cobra.Command{
		Use:   "score [flags] FILE.jsonl|-",
		Short: "Score a JSONL dataset of runs (one run per line; - reads stdin)",
		Long: `Score a JSONL dataset: one run per line ({"id", "input", "output", "context", ...}),
blank lines ignored. Lines are scored concurrently and reported in input order.

A line that is not a valid run, or is larger than run_limits.max_run_bytes (8 MiB unless
the config says otherwise), is reported on stderr as FILE:LINE and becomes a failed result
(code invalid_run or limit_exceeded) for every selected scorer; the other lines are still
scored. Failed or skipped results from scorers do not change the exit status; gates do.

Gates make a CI step fail: --fail-under SCORER=MIN fails when SCORER's mean score (scored
results only, 0-1 whatever --scale says) is below MIN, and --max-failed N or P% when more
results than that failed. The config file's "gate" object sets the same.

Exit status: 0 all went well; 1 usage or setup error; 2 some line was not a valid run, or
the file is empty or not JSON Lines; 3 a gate failed; 130 interrupted (Ctrl-C), after the
summary of the lines scored so far.`,
		Example: `  scorekit score examples/runs.jsonl
  scorekit score --format jsonl --out results.jsonl examples/runs.jsonl
  scorekit score --fail-under prescreen=0.6 --max-failed 0 --format junit --out report.xml examples/runs.jsonl
  cat runs.jsonl | scorekit score --scorers prescreen --scale 100 -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.scaleSet = cmd.Flags().Changed("scale")
			return e.score(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.scorers, "scorers", []string{defaultScorer}, "scorers to run, comma separated (see: scorekit scorers)")
	f.StringVar(&o.format, "format", "table", "output format: table (summary), jsonl (one line per run and scorer) or junit (JUnit XML for CI)")
	f.StringVarP(&o.out, "out", "o", "", "write the output to FILE instead of stdout")
	f.Float64Var(&o.scale, "scale", 1, "multiply every score by N, a number above 0 (e.g. 100 for percentages)")
	f.StringVar(&o.config, "config", "", `JSON file with per-scorer configs, the judge, gates and run limits: {"scorers": {"NAME": {...}}, "judge": {...}, "gate": {...}, "run_limits": {...}}`)
	f.DurationVar(&o.timeout, "timeout", host.DefaultTimeout, "deadline of one scorer call, above 0 (e.g. 30s, 2m)")
	f.IntVar(&o.concurrency, "concurrency", runtime.GOMAXPROCS(0), "runs scored at the same time, 1 or more")
	f.BoolVar(&o.steps, "steps", false, "jsonl: include each result's pipeline steps (prompts and parsed judge output)")
	f.IntVar(&o.worst, "worst", 5, "table: how many of the lowest-scoring runs to show per scorer (0 for none)")
	f.StringArrayVar(&o.failUnder, "fail-under", nil, "gate: exit 3 when SCORER's mean score is below MIN (0-1), as SCORER=MIN; repeatable or comma separated")
	f.BoolVar(&o.stats, "stats", false, "after the output, print to stderr the lines per second, CPU time and memory, process plugins' processes included")
	f.StringVar(&o.maxFailed, "max-failed", "", "gate: exit 3 when more than N results, or more than P% of them, failed (N or P%)")
	judgeFlags(f, &o.judge)
	pluginDirsFlag(cmd, &o.plugins)
	f.StringVar(&o.runtime, "runtime", "", "run the built-in scorers in this runtime: native, wasm (sandboxed WebAssembly, built by make wasm-plugins) or process (go-plugin, make process-plugins); every selected scorer must then run there")
	return cmd
}

// check validates the flags that need more than their type, naming the flag.
func (o *scoreOptions) check() error {
	switch o.format {
	case "table", "jsonl", "junit":
	default:
		return fmt.Errorf("score: --format %q: want table, jsonl or junit", o.format)
	}
	if o.concurrency < 1 {
		return fmt.Errorf("score: --concurrency %d: want 1 or more", o.concurrency)
	}
	if err := checkTimeout("--timeout", o.timeout); err != nil {
		return fmt.Errorf("score: %w", err)
	}
	if o.scaleSet && (math.IsNaN(o.scale) || math.IsInf(o.scale, 0) || o.scale <= 0) {
		return fmt.Errorf("score: --scale %v: want a number above 0 (1 keeps scores in 0-1, 100 gives percentages)", o.scale)
	}
	if o.worst < 0 {
		return fmt.Errorf("score: --worst %d: want 0 or more (0 lists no runs)", o.worst)
	}
	return nil
}

// checkTimeout validates a call deadline given by flag: zero or negative would fail every
// call at once.
func checkTimeout(flag string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s %v: want a duration above 0, such as 30s or 2m (the deadline of one scorer call)", flag, d)
	}
	return nil
}

// gcPercent is the garbage collector's target while `score` runs, unless GOGC says
// otherwise. Scoring keeps little alive (the batches in flight) and allocates a lot per
// line, so the default 100 collects a small heap over and over: a tenth of the command's
// CPU with the pre-screen. 400 lets the heap grow to five times what is live, a few tens
// of MiB, and saves most of that.
const gcPercent = 400

// score runs `scorekit score`.
func (e *env) score(ctx context.Context, path string, o scoreOptions) (err error) {
	if err := o.check(); err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	}
	names := dedupe(o.scorers)
	if len(names) == 0 {
		return fmt.Errorf("score: --scorers is empty; name at least one (see: scorekit scorers)")
	}
	ho := hostOptions{config: o.config, plugins: o.plugins, timeout: o.timeout, judge: o.judge, scorers: names}
	// --runtime wasm|process loads the built-ins' build for that runtime when there is
	// one; when there is none, checkScorers names the make target that builds it.
	var missing error
	if o.runtime == host.RuntimeWASM || o.runtime == host.RuntimeProcess {
		ho.builtins, missing = builtinManifest(o.runtime)
	}
	h, cfg, closeHost, err := e.openHost(ctx, ho)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeHost(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("score: unload plugins: %w", cerr)
		}
	}()
	if err := checkScorers(h.Registry(), names, o.runtime, missing); err != nil {
		return err
	}
	gate, err := parseGates(cfg.Gate, o.failUnder, o.maxFailed, names)
	if err != nil {
		return err
	}
	sel, openErr := openScorers(ctx, h, cfg, names, o)
	defer func() {
		for _, s := range sel.scorers {
			if cerr := s.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
				err = fmt.Errorf("score: close %s: %w", s.Info().Name, cerr)
			}
		}
	}()
	if openErr != nil {
		return openErr
	}

	in, inName, total, err := e.openInput(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, closeOut, err := e.openOutput(o.out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeOut(); cerr != nil && err == nil {
			err = fmt.Errorf("score: write %s: %w", o.out, cerr)
		}
	}()

	sink := newSink(out, names, o, sel)
	bar := e.progress(total)
	counts := newTally(names)
	counts.noJudge = sel.noJudge
	bad, scoredLines := 0, 0
	emit := func(l scoredLine) error {
		if l.bad != nil {
			bad++
			if bar != nil {
				_ = bar.Clear()
			}
			fmt.Fprintf(e.stderr, "%s:%d: %v\n", inName, l.line, l.bad)
		}
		if bar != nil {
			_ = bar.Add(1)
		}
		scoredLines++
		counts.add(l)
		return sink.add(l)
	}
	p := lineScorer{scorers: sel.scorers, concurrency: o.concurrency, limit: int64(h.RunLimits().MaxRunBytes)}
	if s, ok := sink.(interface{ idle() error }); ok {
		p.idle = s.idle
	}
	if s, ok := sink.(preparer); ok {
		p.prep = s
	}
	start := time.Now()
	if err := p.run(ctx, in, emit); err != nil {
		return datasetErr(err, path, inName)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err := sink.finish(p.interrupted); err != nil {
		return fmt.Errorf("score: write output: %w", err)
	}
	if o.stats {
		collectStats(scoredLines, time.Since(start), h.Registry()).write(e.stderr)
	}
	if p.interrupted {
		return fmt.Errorf("%w after %d line(s) of %s; the output covers those lines only", errInterrupted, scoredLines, inName)
	}
	failedGates := 0
	if !gate.empty() {
		failedGates = gate.check(counts, o.scale, e.stderr)
	}
	if bad > 0 {
		return fmt.Errorf("%w: %d invalid line(s) in %s (see the messages above; each became a failed result)", errBadInput, bad, inName)
	}
	if failedGates > 0 {
		return fmt.Errorf("%w: %d of the gates above failed", errGate, failedGates)
	}
	return nil
}

// selection is the scorers a `score` command opened, in the order of its --scorers, with
// each one's pass threshold (scaled) and whether it needs a judge the command does not
// have.
type selection struct {
	scorers    []*host.Scorer
	thresholds []float64
	// noJudge: the scorer needs a judge the command does not have, so it did not run: the
	// table and the gates say so rather than show the mean of what it grades without one.
	noJudge []bool
}

// openScorers opens the scorers names. On an error, the selection holds those opened
// before it, for the caller to close.
func openScorers(ctx context.Context, h *host.Host, cfg fileConfig, names []string, o scoreOptions) (selection, error) {
	var scale *float64
	if o.scaleSet {
		scale = &o.scale
	}
	sel := selection{
		scorers:    make([]*host.Scorer, 0, len(names)),
		thresholds: make([]float64, 0, len(names)),
		noJudge:    make([]bool, 0, len(names)),
	}
	hasJudge := cfg.Judge.merge(o.judge).URL != ""
	for _, n := range names {
		s, err := h.Open(ctx, n, host.OpenOptions{Config: cfg.Scorers[n], Scale: scale})
		if err != nil {
			return sel, fmt.Errorf("score: open %s: %w", n, err)
		}
		sel.scorers = append(sel.scorers, s)
		sel.thresholds = append(sel.thresholds, s.Info().Threshold*o.scale)
		info := s.Info()
		sel.noJudge = append(sel.noJudge, !hasJudge && (info.Has(sdk.CapJudge) || info.Has(sdk.CapEmbed)))
	}
	return sel, nil
}

// newSink returns the sink of o.format for the selected scorers.
func newSink(out io.Writer, names []string, o scoreOptions, sel selection) resultSink {
	switch o.format {
	case "jsonl":
		return newJSONLSink(out, names, o.steps)
	case "junit":
		return newJUnitSink(out, names, sel.thresholds)
	default:
		return newTableSink(out, names, o.worst, sel.noJudge)
	}
}

// datasetErr is the error of a dataset the line scorer could not read (path as given, name as
// shown): one that is not JSON Lines at all says how to make it so.
func datasetErr(err error, path, name string) error {
	switch {
	case errors.Is(err, errNoRuns):
		return fmt.Errorf("%w: %s has no runs (it is empty or blank); score wants JSON Lines, one run per line", errBadInput, name)
	case errors.Is(err, errJSONArray):
		src := name
		if path == "-" {
			src = "FILE.json"
		}
		return fmt.Errorf("%w: %s is a JSON array, not JSON Lines (one run per line); convert it with: jq -c '.[]' %s > runs.jsonl",
			errBadInput, name, src)
	}
	return fmt.Errorf("score %s: %w", name, err)
}

// checkScorers fails on a scorer the registry does not know, naming the known ones, and,
// when runtime is set, on a scorer that would run elsewhere: a benchmark or a sandboxing
// policy must not silently fall back to the native build.
// missing, when set, says why the built-ins' build for runtime was not loaded.
func checkScorers(reg *host.Registry, names []string, runtime string, missing error) error {
	switch runtime {
	case "", host.RuntimeNative, host.RuntimeWASM, host.RuntimeProcess:
	default:
		return fmt.Errorf("score: --runtime %q: want %s, %s or %s", runtime, host.RuntimeNative, host.RuntimeWASM, host.RuntimeProcess)
	}
	known := reg.Names()
	for _, n := range names {
		p, err := reg.Lookup(n)
		if errors.Is(err, host.ErrUnavailable) {
			return fmt.Errorf("score: %w", err)
		}
		if err != nil {
			hint := ""
			if fs := reg.Failures(); len(fs) > 0 {
				hint = fmt.Sprintf("; %d plugin(s) failed to load, see why with: scorekit scorers", len(fs))
			}
			return fmt.Errorf("score: unknown scorer %q (known: %s)%s", n, strings.Join(known, ", "), hint)
		}
		if runtime != "" && p.Runtime() != runtime {
			hint := ""
			if missing != nil {
				hint = "; " + missing.Error()
			}
			return fmt.Errorf("score: --runtime %s: scorer %s runs %s; load a %s build of it with --plugins DIR%s",
				runtime, n, p.Runtime(), runtime, hint)
		}
	}
	return nil
}

// openInput opens the dataset. total is the number of lines when it can be known up front
// (a regular file), -1 otherwise; it only sizes the progress bar.
func (e *env) openInput(path string) (rc io.ReadCloser, name string, total int64, err error) {
	if path == "-" {
		return io.NopCloser(e.stdin), "stdin", -1, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", 0, fmt.Errorf("score: %w", err)
	}
	total = -1
	if e.stderrIsTerminal {
		if n, err := countLines(f); err == nil {
			total = n
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, "", 0, fmt.Errorf("score: rewind %s: %w", path, err)
		}
	}
	return f, path, total, nil
}

// openOutput returns where results go and how to finish writing them.
func (e *env) openOutput(path string) (io.Writer, func() error, error) {
	if path == "" {
		return e.stdout, func() error { return nil }, nil
	}
	// Like go build -o, --out build/report.xml makes build/ when it is missing.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("score: --out %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("score: %w", err)
	}
	return f, f.Close, nil
}

// progress returns a progress bar on stderr, or nil when stderr is not a terminal (a log
// file or a pipe must not fill with carriage returns).
func (e *env) progress(total int64) *progressbar.ProgressBar {
	if !e.stderrIsTerminal {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription("scoring"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionShowIts(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
}

func countLines(r io.Reader) (int64, error) {
	var n int64
	buf := make([]byte, 64<<10)
	last := byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func dedupe(names []string) []string {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
