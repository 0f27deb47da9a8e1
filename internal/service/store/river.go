package store

import (
	"context"
	"fmt"
)

// JobCount is how many of River's jobs of a kind are in a state.
type JobCount struct {
	Kind, State string
	N           int64
}

// JobCounts counts the jobs that wait or run in River's table, by kind and state, across
// every process that works this database.
func (s *Store) JobCounts(ctx context.Context) ([]JobCount, error) {
	out, err := collect(ctx, s.q, `SELECT kind, state, COUNT(*) FROM river_job
	WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled') GROUP BY kind, state ORDER BY kind, state`, nil,
		func(s scanner) (c JobCount, err error) {
			err = s.Scan(&c.Kind, &c.State, &c.N)
			return c, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: job counts: %w", err)
	}
	return out, nil
}
