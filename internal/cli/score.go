package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
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
}

func (e *env) scoreCommand() *cobra.Command {
	var o scoreOptions
	cmd := &cobra.Command{
		Use:   "score [flags] FILE.jsonl|-",
		Short: "Score a JSONL dataset of runs (one run per line; - reads stdin)",
		Long: `Score a JSONL dataset: one run per line ({"id", "input", "output", "context", ...}),
blank lines ignored. Lines are scored concurrently and reported in input order.

A line that is not a valid run is reported on stderr as FILE:LINE and becomes a failed
result (code invalid_run) for every selected scorer; the other lines are still scored and
the exit status is 2. Failed or skipped results from scorers do not change the exit status.`,
		Example: `  scorekit score examples/runs.jsonl
  scorekit score --format jsonl --out results.jsonl examples/runs.jsonl
  cat runs.jsonl | scorekit score --scorers prescreen --scale 100 -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.scaleSet = cmd.Flags().Changed("scale")
			return e.score(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.scorers, "scorers", []string{defaultScorer}, "scorers to run, comma separated (see: scorekit scorers)")
	f.StringVar(&o.format, "format", "table", "output format: table (summary) or jsonl (one line per run and scorer)")
	f.StringVarP(&o.out, "out", "o", "", "write the output to FILE instead of stdout")
	f.Float64Var(&o.scale, "scale", 1, "multiply every score by N (e.g. 100 for percentages)")
	f.StringVar(&o.config, "config", "", `JSON file with per-scorer configs and the judge: {"scorers": {"NAME": {...}}, "judge": {...}}`)
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "deadline of one scorer call")
	f.IntVar(&o.concurrency, "concurrency", runtime.GOMAXPROCS(0), "runs scored at the same time")
	f.BoolVar(&o.steps, "steps", false, "jsonl: include each result's pipeline steps (prompts and parsed judge output)")
	f.IntVar(&o.worst, "worst", 5, "table: how many of the lowest-scoring runs to show per scorer")
	judgeFlags(f, &o.judge)
	pluginDirsFlag(cmd, &o.plugins)
	f.StringVar(&o.runtime, "runtime", "", "run the built-in scorers in this runtime: native, wasm (sandboxed WebAssembly, built by make wasm-plugins) or process (go-plugin, make process-plugins); every selected scorer must then run there")
	return cmd
}

// score runs `scorekit score`.
func (e *env) score(ctx context.Context, path string, o scoreOptions) (err error) {
	if o.format != "table" && o.format != "jsonl" {
		return fmt.Errorf("score: --format %q: want table or jsonl", o.format)
	}
	if o.concurrency < 1 {
		return fmt.Errorf("score: --concurrency %d: want 1 or more", o.concurrency)
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
	var scale *float64
	if o.scaleSet {
		scale = &o.scale
	}
	scorers := make([]*host.Scorer, 0, len(names))
	defer func() {
		for _, s := range scorers {
			if cerr := s.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
				err = fmt.Errorf("score: close %s: %w", s.Info().Name, cerr)
			}
		}
	}()
	for _, n := range names {
		s, err := h.Open(ctx, n, host.OpenOptions{Config: cfg.Scorers[n], Scale: scale})
		if err != nil {
			return fmt.Errorf("score: open %s: %w", n, err)
		}
		scorers = append(scorers, s)
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

	var sink resultSink
	if o.format == "jsonl" {
		sink = newJSONLSink(out, names, o.steps)
	} else {
		sink = newTableSink(out, names, o.worst)
	}
	bar := e.progress(total)
	bad := 0
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
		return sink.add(l)
	}
	p := pipeline{scorers: scorers, concurrency: o.concurrency}
	if err := p.run(ctx, in, emit); err != nil {
		return fmt.Errorf("score %s: %w", inName, err)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err := sink.finish(); err != nil {
		return fmt.Errorf("score: write output: %w", err)
	}
	if bad > 0 {
		return fmt.Errorf("%w: %d invalid line(s) in %s (see the messages above; each became a failed result)", errBadInput, bad, inName)
	}
	return nil
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
		if err != nil {
			return fmt.Errorf("score: unknown scorer %q (known: %s)", n, strings.Join(known, ", "))
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

// scoredLine is one dataset line with one result per selected scorer.
type scoredLine struct {
	seq   int // position among non-blank lines, for ordering
	line  int // 1-based line number in the file
	runID string
	bad   error // set when the line is not a valid run
	// results are in the order of the selected scorers.
	results []sdk.Result
}

// pipeline scores lines with a bounded pool of workers and emits them in input order.
type pipeline struct {
	scorers     []*host.Scorer
	concurrency int
}

type lineJob struct {
	seq, line int
	data      []byte
}

// run reads in line by line, scores each line on p.concurrency workers and calls emit for
// each line in input order. At most 4*concurrency lines are in flight, so a slow line
// holds back memory, not correctness.
func (p *pipeline) run(ctx context.Context, in io.Reader, emit func(scoredLine) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	window := make(chan struct{}, 4*p.concurrency)
	jobs := make(chan lineJob)
	done := make(chan scoredLine)
	var readErr error
	go func() {
		defer close(jobs)
		readErr = readLines(in, func(j lineJob) bool {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return false
			}
			select {
			case jobs <- j:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	var wg sync.WaitGroup
	for range p.concurrency {
		wg.Go(func() {
			for j := range jobs {
				done <- p.scoreLine(ctx, j)
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	pending := map[int]scoredLine{}
	next := 0
	var emitErr error
	for l := range done {
		pending[l.seq] = l
		for {
			x, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-window
			if emitErr == nil {
				if emitErr = emit(x); emitErr != nil {
					cancel()
				}
			}
		}
	}
	if emitErr != nil {
		return emitErr
	}
	if readErr != nil {
		return readErr
	}
	return ctx.Err()
}

// readLines calls yield for each non-blank line until yield returns false.
func readLines(in io.Reader, yield func(lineJob) bool) error {
	r := bufio.NewReaderSize(in, 64<<10)
	seq := 0
	for n := 1; ; n++ {
		b, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			if !yield(lineJob{seq: seq, line: n, data: b}) {
				return nil
			}
			seq++
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read line %d: %w", n, err)
		}
	}
}

func (p *pipeline) scoreLine(ctx context.Context, j lineJob) scoredLine {
	l := scoredLine{seq: j.seq, line: j.line, runID: fmt.Sprintf("line-%d", j.line)}
	run, err := host.DecodeRun(j.data)
	if err != nil {
		l.bad = err
		res := sdk.Failed(sdk.CodeInvalidRun, err.Error())
		for range p.scorers {
			l.results = append(l.results, res)
		}
		return l
	}
	if run.ID != "" {
		l.runID = run.ID
	}
	for _, s := range p.scorers {
		l.results = append(l.results, s.Score(ctx, run))
	}
	return l
}
