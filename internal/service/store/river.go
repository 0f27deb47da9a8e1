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
	rs, err := s.q.query(ctx, `SELECT kind, state, COUNT(*) FROM river_job
	WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled') GROUP BY kind, state ORDER BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("store: job counts: %w", err)
	}
	defer rs.Close()
	var out []JobCount
	for rs.Next() {
		var c JobCount
		if err := rs.Scan(&c.Kind, &c.State, &c.N); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rs.Err()
}
