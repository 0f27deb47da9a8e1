package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps SQLite's statements prepared. The driver prepares every statement it is
// given anew, and parsing and planning SQL took a quarter of the CPU of storing runs one a
// request (BENCHMARKS.md, "Arrivals"); the store's statements are few and fixed, so each
// is prepared once for the store's one connection and reused, in transactions too.
//
// A statement is prepared on the pool by a goroutine of its own the first time it runs:
// inside a transaction the pool's one connection is taken, and preparing there would wait
// for itself. Until then it runs unprepared. Statements with many parameters (the batch
// inserts, whose text depends on the batch's size) are not kept.
type stmtCache struct {
	db *sql.DB

	mu        sync.Mutex
	stmts     map[string]*sql.Stmt
	preparing map[string]bool
	closed    bool
	// prepares counts the statements being prepared, for close to wait for: a prepare
	// that outlived the store would open the database file after it was closed.
	prepares sync.WaitGroup
}

// Bounds of what stmtCache keeps.
const (
	maxCachedStmts  = 256
	maxCachedParams = 32
)

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}, preparing: map[string]bool{}}
}

// get returns q's prepared statement, or nil after starting to prepare it when it is one
// to keep.
func (c *stmtCache) get(q string, params int) *sql.Stmt {
	if params > maxCachedParams {
		return nil
	}
	return c.getFixed(q)
}

// getFixed is get for a statement kept whatever its number of parameters: one of the
// few texts of a batchInsert.
func (c *stmtCache) getFixed(q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[q]; ok {
		return st
	}
	if c.closed || c.preparing[q] || len(c.stmts)+len(c.preparing) >= maxCachedStmts {
		return nil
	}
	c.preparing[q] = true
	c.prepares.Add(1)
	go c.prepare(q)
	return nil
}

func (c *stmtCache) prepare(q string) {
	defer c.prepares.Done()
	st, err := c.db.PrepareContext(context.Background(), q)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.preparing, q)
	switch {
	case err != nil:
		// Left unprepared: the statement runs as it is and reports its own error.
	case c.closed:
		_ = st.Close()
	default:
		c.stmts[q] = st
	}
}

// close releases the statements, once those being prepared are; later gets return nil.
func (c *stmtCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.prepares.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		_ = st.Close()
		delete(c.stmts, q)
	}
}
