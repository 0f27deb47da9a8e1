package jobs

import (
	"context"
	"fmt"

	"github.com/scorekit/scorekit/internal/service/telemetry"
)

// depthQuery counts the jobs that wait or run, by kind and state, in River's own table.
const depthQuery = `SELECT kind, state, COUNT(*) FROM river_job
	WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled') GROUP BY kind, state ORDER BY kind, state`

// Kinds are the kinds of the jobs the engine inserts.
func Kinds() []string {
	return []string{EvaluateArgs{}.Kind(), InsightsArgs{}.Kind(), WebhookArgs{}.Kind()}
}

// scanner is what *sql.Rows and pgx.Rows share.
type scanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// QueueDepth counts the jobs that wait or run, by kind and state, across every process
// that works this database.
func (e *Queue) QueueDepth(ctx context.Context) ([]telemetry.QueueCount, error) {
	var rs scanner
	if p := e.st.Pool(); p != nil {
		rows, err := p.Query(ctx, depthQuery)
		if err != nil {
			return nil, fmt.Errorf("jobs: queue depth: %w", err)
		}
		defer rows.Close()
		rs = rows
	} else {
		rows, err := e.st.SQLDB().QueryContext(ctx, depthQuery)
		if err != nil {
			return nil, fmt.Errorf("jobs: queue depth: %w", err)
		}
		defer rows.Close()
		rs = rows
	}
	var out []telemetry.QueueCount
	for rs.Next() {
		var c telemetry.QueueCount
		if err := rs.Scan(&c.Kind, &c.State, &c.N); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rs.Err()
}

// TelemetrySources are the gauges of the service read from its database at each scrape:
// the queue's depth and the open insights; and the tenants that exist, whose list drops a
// deleted tenant's series.
func (e *Queue) TelemetrySources() telemetry.Sources {
	return telemetry.Sources{
		Queue:      e.QueueDepth,
		QueueKinds: Kinds(),
		Insights: func(ctx context.Context) ([]telemetry.OpenCount, error) {
			cs, err := e.st.CountOpenInsights(ctx)
			out := make([]telemetry.OpenCount, len(cs))
			for i, c := range cs {
				out[i] = telemetry.OpenCount(c)
			}
			return out, err
		},
		Tenants: func(ctx context.Context) ([]telemetry.Tenant, error) {
			ts, err := e.st.Tenants(ctx)
			out := make([]telemetry.Tenant, len(ts))
			for i, t := range ts {
				out[i] = telemetry.Tenant{ID: t.ID, Created: t.CreatedAt, Name: t.Name}
			}
			return out, err
		},
	}
}
