package jobs

import (
	"context"
	"fmt"

	"github.com/scorekit/scorekit/internal/service/telemetry"
)

// Kinds are the kinds of the jobs the engine inserts.
func Kinds() []string {
	return []string{EvaluateArgs{}.Kind(), InsightsArgs{}.Kind(), WebhookArgs{}.Kind()}
}

// QueueDepth counts the jobs that wait or run, by kind and state, across every process
// that works this database.
func (e *Queue) QueueDepth(ctx context.Context) ([]telemetry.QueueCount, error) {
	counts, err := e.st.JobCounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobs: queue depth: %w", err)
	}
	out := make([]telemetry.QueueCount, len(counts))
	for i, c := range counts {
		out[i] = telemetry.QueueCount{Kind: c.Kind, State: c.State, N: c.N}
	}
	return out, nil
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
