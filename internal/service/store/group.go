package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// group lets concurrent writers on SQLite share one transaction and its commit (group
// commit). SQLite writes one transaction at a time through the store's one connection,
// and each commit appends every page it changed to the WAL: 32 clients storing one run
// each pay 32 commits, each rewriting the same index pages. Sharing the commit writes
// those pages once for all of them.
//
// The first caller to find no batch running leads: it takes every call waiting, runs
// each in a savepoint of one transaction, commits, and hands the lead to the next caller
// waiting, if any. Each caller runs at most one batch, its own among them, so none is held
// up by more than one batch of others.
type group struct {
	mu      sync.Mutex
	pending []*groupCall
	leading bool
}

// groupCall is one caller's transaction function and its outcome.
type groupCall struct {
	ctx  context.Context
	f    func(context.Context, *Tx) error
	err  error
	done chan struct{} // closed when err is final
	lead chan struct{} // receives when this call is to lead the next batch
}

// InSharedTx runs f in a transaction, like InTx, that on SQLite it may share with other
// callers of InSharedTx running at the same time: their work is committed together. Each
// caller still learns its own outcome: f runs in a savepoint of its own, so an f that
// fails (returns an error or panics) has its writes undone and its error returned, and
// the others commit without it. A failed commit fails every f of the batch.
//
// f gets ctx without its end: once it has started, f runs to the end even if ctx ends,
// because interrupting a statement would roll back the whole shared transaction; a ctx
// that ended before f started returns its error. f runs on the leader's goroutine.
//
// On PostgreSQL it is InTx (a panic of f returned as an error all the same): each
// connection commits on its own, and the server flushes concurrent commits to its WAL
// together already.
func (s *Store) InSharedTx(ctx context.Context, f func(ctx context.Context, tx *Tx) error) error {
	return s.d.inSharedTx(ctx, f)
}

// do runs f with the calls waiting in one transaction of d, leading the batch when none
// is running.
func (g *group) do(ctx context.Context, d dialect, f func(ctx context.Context, tx *Tx) error) error {
	c := &groupCall{ctx: ctx, f: f, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		select {
		case <-c.done:
			return c.err
		case <-c.lead:
		}
	}
	g.lead(d)
	<-c.done
	return c.err
}

// lead runs the calls waiting as one batch, then passes the lead on.
func (g *group) lead(d dialect) {
	g.mu.Lock()
	batch := g.pending
	g.pending = nil
	g.mu.Unlock()

	runShared(d, batch)
	for _, c := range batch {
		close(c.done)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 {
		g.leading = false
		return
	}
	g.pending[0].lead <- struct{}{}
}

// runShared runs batch in one transaction of d and sets each call's err.
func runShared(d dialect, batch []*groupCall) {
	// The transaction outlives any one caller's context: a caller that leaves must not
	// roll back the others' work.
	ctx := context.Background()
	failAll := func(err error) {
		for _, c := range batch {
			if c.err == nil {
				c.err = err
			}
		}
	}
	c, err := d.begin(ctx)
	if err != nil {
		failAll(fmt.Errorf("store: begin: %w", err))
		return
	}
	defer c.rollback(ctx)
	tx := &Tx{queries: queries{q: c, d: d}, conn: c}
	committed := 0
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			continue
		}
		if len(batch) == 1 {
			c.err = callF(c, tx)
			break
		}
		// One name for every call's savepoint: each is released before the next, and the
		// same text is a statement prepared once (cachingConn).
		if _, err := tx.q.exec(ctx, "SAVEPOINT shared_call"); err != nil {
			failAll(fmt.Errorf("store: savepoint: %w", err))
			return
		}
		saved := tx.save()
		if c.err = callF(c, tx); c.err != nil {
			tx.restore(saved)
			if _, err := tx.q.exec(ctx, "ROLLBACK TO shared_call"); err != nil {
				// The transaction is in no known state: none of the batch is kept.
				failAll(fmt.Errorf("store: undo a failed write of a shared transaction (after %v): %w", c.err, err))
				return
			}
		}
		if _, err := tx.q.exec(ctx, "RELEASE shared_call"); err != nil {
			failAll(fmt.Errorf("store: release savepoint: %w", err))
			return
		}
	}
	for _, c := range batch {
		if c.err == nil {
			committed++
		}
	}
	if committed == 0 {
		return
	}
	if err := tx.beforeCommit(ctx); err != nil {
		failAll(err)
		return
	}
	if err := c.commit(ctx); err != nil {
		failAll(fmt.Errorf("store: commit: %w", err))
	}
}

// errPanic wraps a panic of a shared transaction's function.
var errPanic = errors.New("panic in a transaction function")

// callF runs c.f on tx with c's context without its end (see InSharedTx), a panic
// becoming c's error.
func callF(c *groupCall, tx *Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: %w: %v", errPanic, r)
		}
	}()
	return c.f(context.WithoutCancel(c.ctx), tx)
}
