package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// A run arrives under a policy and waits for its flush job; the agent is deleted (with
// the arrival evaluation) before the job runs. The job ends cancelled on its first
// attempt: nothing is left to hand over. Before, it failed on "not found" and River
// retried it until it gave up, five attempts later.
func TestArrivalFlushAfterItsAgentIsDeleted(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		o := servicetest.Options{NoWorkers: true}
		api := servicetest.New(t, dsn, o)
		tenant, err := api.Service.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Service.SetAgentPolicy(ctx, tenant, "bot", store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}); err != nil {
			t.Fatal(err)
		}
		if res, err := api.Service.ImportRuns(ctx, tenant, oneRun(t, "bot", 1), service.ImportOptions{}); err != nil || len(res.Evaluations) != 1 {
			t.Fatalf("import: %+v, %v", res, err)
		}
		if _, err := api.Service.DeleteAgent(ctx, tenant, "test", "bot"); err != nil {
			t.Fatal(err)
		}
		// A worker process starts and takes the flush job.
		o.NoWorkers, o.Jobs.Workers = false, 1
		servicetest.New(t, dsn, o)
		kind := (jobs.FlushArgs{}).Kind()
		deadline := time.Now().Add(60 * time.Second)
		for {
			state, attempt, err := jobState(api.Store, kind)
			if err != nil {
				t.Fatal(err)
			}
			switch state {
			case "cancelled":
				if attempt != 1 {
					t.Fatalf("the flush job was cancelled on attempt %d; want the first", attempt)
				}
				return
			case "completed", "discarded":
				t.Fatalf("the flush job ended %s after %d attempts; want cancelled on the first", state, attempt)
			}
			if attempt > 1 {
				t.Fatalf("the flush job is %s on attempt %d: it was retried", state, attempt)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the flush job is still %s after 60s (attempt %d)", state, attempt)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// jobState is the state and attempt of the one job of kind.
func jobState(st *store.Store, kind string) (state string, attempt int, err error) {
	ctx := context.Background()
	q := `SELECT state, attempt FROM river_job WHERE kind = $1`
	if st.Pool() != nil {
		err = st.Pool().QueryRow(ctx, q, kind).Scan(&state, &attempt)
		return state, attempt, err
	}
	err = st.SQLDB().QueryRowContext(ctx, strings.ReplaceAll(q, "$1", "?"), kind).Scan(&state, &attempt)
	return state, attempt, err
}
