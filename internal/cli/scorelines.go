package cli

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// scoredLine is one dataset line with one result per selected scorer.
type scoredLine struct {
	line  int // 1-based line number in the file
	runID string
	bad   error // set when the line is not a valid run (or too large to read)
	// results are in the order of the selected scorers.
	results []sdk.Result
	// interrupted is set when the command was interrupted while the line was scored: its
	// results may be cancellations, not judgements.
	interrupted bool
	// encoded is the line's output, when the sink prepares it on the worker (jsonl).
	encoded []byte
	prepErr error
}

// preparer is a sink that does the costly part of writing a line (encoding it) on the
// worker that scored it, so that the one goroutine emitting lines in order only writes.
type preparer interface {
	prepare(l *scoredLine, buf []byte) ([]byte, error)
}

// lineScorer scores lines with a bounded pool of workers and emits them in input order.
//
// Lines travel in batches: handing each line to a worker and back costs channel
// operations and goroutine wake-ups that cost as much as scoring it with a fast scorer.
// The batch size adapts to how long a line takes, so that a batch is about batchTarget
// of work: hundreds of lines for the pre-screen, one line for a judge scorer (whose calls
// must run concurrently).
type lineScorer struct {
	scorers     []*host.Scorer
	concurrency int
	limit       int64 // the largest line read, in bytes (run_limits.max_run_bytes)
	// idle, when set, is called whenever every line scored so far has been emitted and
	// none is ready: a buffering sink writes out then.
	idle func() error
	// prep, when set, prepares each line's output on the worker.
	prep preparer
	// nsPerLine is a moving average of the time a worker spends on one line.
	nsPerLine atomic.Int64
	// interrupted is set by run when the context ended before every line was emitted.
	interrupted bool
}

const (
	batchTarget   = 500 * time.Microsecond
	maxBatchLines = 256
	maxBatchBytes = 1 << 20
)

// lineJob is one line of a batch: its bytes are arena[start:end], or size is set when it
// was over the limit and not kept.
type lineJob struct {
	line       int
	start, end int
	tooLarge   int64
}

type batch struct {
	seq   int
	jobs  []lineJob
	arena []byte
	out   []scoredLine
	enc   []byte // the lines' prepared output, when the sink prepares it
}

// bufPool recycles batch arenas and encoding buffers: at the pre-screen's speed, growing
// a fresh one per batch was a fifth of the bytes allocated.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getBuf() []byte { return (*bufPool.Get().(*[]byte))[:0] }

func putBuf(b []byte) {
	if cap(b) > 0 && cap(b) <= 4<<20 {
		bufPool.Put(&b)
	}
}

// errNoRuns and errJSONArray say why a dataset cannot be read as JSON Lines at all.
var (
	errNoRuns    = errors.New("no runs")
	errJSONArray = errors.New("a JSON array")
	// errStopped: the reader stopped because the context ended.
	errStopped = errors.New("stopped")
)

// run reads in line by line, scores each line on p.concurrency workers and calls emit for
// each line in input order. At most 4*concurrency batches are in flight, so a slow line
// holds back memory, not correctness. When ctx ends, lines scored before it are emitted
// and the rest are not; p.interrupted says so.
func (p *lineScorer) run(ctx context.Context, in io.Reader, emit func(scoredLine) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	window := make(chan struct{}, 4*p.concurrency)
	jobs := make(chan *batch)
	done := make(chan *batch)
	var readErr error
	go func() {
		defer close(jobs)
		readErr = p.read(in, func(b *batch) bool {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return false
			}
			select {
			case jobs <- b:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	var wg sync.WaitGroup
	for range p.concurrency {
		wg.Go(func() {
			for b := range jobs {
				p.scoreBatch(ctx, b)
				done <- b
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	pending := map[int]*batch{}
	next := 0
	var emitErr error
	stopped := false
	for b := range done {
		pending[b.seq] = b
		for {
			x, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-window
			for _, l := range x.out {
				if stopped || emitErr != nil {
					break
				}
				if l.interrupted {
					stopped = true
					break
				}
				if emitErr = emit(l); emitErr != nil {
					cancel()
				}
			}
			putBuf(x.enc)
			x.enc = nil
		}
		if p.idle != nil && emitErr == nil && len(done) == 0 {
			if emitErr = p.idle(); emitErr != nil {
				cancel()
			}
		}
	}
	if emitErr != nil {
		return emitErr
	}
	if stopped || errors.Is(readErr, errStopped) {
		p.interrupted = true
		return nil
	}
	return readErr
}

// read splits in into batches of lines and calls send for each until it returns false.
func (p *lineScorer) read(in io.Reader, send func(*batch) bool) error {
	lr := newLineReader(in, p.limit)
	seq, lines := 0, 0
	b := &batch{arena: getBuf()}
	flush := func() bool {
		if len(b.jobs) == 0 {
			return true
		}
		b.seq = seq
		seq++
		ok := send(b)
		b = &batch{arena: getBuf()}
		return ok
	}
	stop := func() error {
		if lines == 0 {
			return nil // nothing read: the caller ended before the work began
		}
		return errStopped
	}
	for {
		start := len(b.arena)
		var (
			size int64
			err  error
		)
		b.arena, size, err = lr.next(b.arena)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		job := lineJob{line: lr.n, start: start, end: len(b.arena)}
		if size > p.limit {
			job.tooLarge = size
		} else if blank(b.arena[start:]) {
			b.arena = b.arena[:start]
			continue
		}
		if lines == 0 && job.tooLarge == 0 && looksLikeJSONArray(b.arena[start:]) {
			return errJSONArray
		}
		lines++
		b.jobs = append(b.jobs, job)
		if len(b.jobs) >= p.batchSize() || len(b.arena) >= maxBatchBytes {
			if !flush() {
				return stop()
			}
		}
	}
	if !flush() {
		return stop()
	}
	if lines == 0 {
		return errNoRuns
	}
	return nil
}

// batchSize is how many lines make about batchTarget of work, from the moving average.
func (p *lineScorer) batchSize() int {
	ns := p.nsPerLine.Load()
	if ns <= 0 {
		return 1
	}
	return int(min(max(int64(batchTarget)/ns, 1), maxBatchLines))
}

// scoreBatch scores a batch's lines: each line is decoded and checked once, then each
// scorer scores the batch's valid runs in one host.Scorer.ScoreCheckedBatch, which a WASM
// guest of ABI v2 takes in one call (one call per run cost a guest more than a cheap
// scorer's work) and which does not check the runs again.
func (p *lineScorer) scoreBatch(ctx context.Context, b *batch) {
	start := time.Now()
	b.out = make([]scoredLine, len(b.jobs))
	runs := make([]host.CheckedRun, 0, len(b.jobs))
	at := make([]int, 0, len(b.jobs)) // the line of each run
	for i, j := range b.jobs {
		if ctx.Err() != nil {
			b.out[i] = scoredLine{line: j.line, interrupted: true}
			continue
		}
		var run host.CheckedRun
		var ok bool
		b.out[i], run, ok = p.decodeLine(j, b.arena[j.start:j.end])
		if ok {
			runs = append(runs, run)
			at = append(at, i)
		}
	}
	for k, s := range p.scorers {
		if len(runs) == 0 || ctx.Err() != nil {
			break
		}
		for r, res := range s.ScoreCheckedBatch(ctx, runs) {
			b.out[at[r]].results[k] = res
		}
	}
	if ctx.Err() != nil {
		// Lines scored before the end stand; from the first line a scorer could not finish
		// on, the lines are the interruption's.
		cut := false
		for i := range b.out {
			cut = cut || b.out[i].interrupted || unfinished(b.out[i].results)
			b.out[i].interrupted = cut
		}
	}
	putBuf(b.arena)
	b.arena = nil
	if p.prep != nil {
		buf := getBuf()
		for i := range b.out {
			if b.out[i].interrupted {
				break
			}
			n := len(buf)
			var err error
			if buf, err = p.prep.prepare(&b.out[i], buf); err != nil {
				b.out[i].prepErr = err
			}
			b.out[i].encoded = buf[n:len(buf):len(buf)]
		}
		b.enc = buf
	}
	per := time.Since(start).Nanoseconds() / int64(len(b.jobs))
	old := p.nsPerLine.Load()
	if old > 0 {
		per = (3*old + per) / 4
	}
	p.nsPerLine.Store(max(per, 1))
}

// decodeLine reads a line's run; ok is false when the line is not one, and the line then
// carries the failure as every scorer's result.
func (p *lineScorer) decodeLine(j lineJob, data []byte) (l scoredLine, run host.CheckedRun, ok bool) {
	l = scoredLine{line: j.line}
	fail := func(code string, err error) (scoredLine, host.CheckedRun, bool) {
		l.runID = "line-" + strconv.Itoa(j.line)
		l.bad = err
		res := sdk.Failed(code, err.Error())
		l.results = make([]sdk.Result, len(p.scorers))
		for i := range l.results {
			l.results[i] = res
		}
		return l, host.CheckedRun{}, false
	}
	if j.tooLarge > 0 {
		return fail(sdk.CodeLimitExceeded, host.RunLimits{MaxRunBytes: int(p.limit)}.CheckSize(j.tooLarge))
	}
	run, err := host.DecodeCheckedRun(data)
	if err != nil {
		return fail(sdk.CodeInvalidRun, err)
	}
	l.runID = run.Run().ID
	if l.runID == "" {
		l.runID = "line-" + strconv.Itoa(j.line)
	}
	l.results = make([]sdk.Result, len(p.scorers))
	return l, run, true
}

// unfinished reports whether a scorer was stopped on the line by the command's end (its
// result is a cancellation or an empty slot, not a judgement).
func unfinished(results []sdk.Result) bool {
	for _, r := range results {
		if r.Status == "" || r.Status == sdk.StatusFailed && r.Error != nil && (r.Error.Code == sdk.CodeCanceled || r.Error.Code == sdk.CodeTimeout) {
			return true
		}
	}
	return false
}
