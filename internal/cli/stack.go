package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
)

// EnvDB names the environment variable that sets --db's default.
const EnvDB = "SCOREKIT_DB"

// defaultDB is --db's default: $SCOREKIT_DB, else scorekit.db in the working directory.
func defaultDB() string {
	if v := os.Getenv(EnvDB); v != "" {
		return v
	}
	return "scorekit.db"
}

// dbFlag adds --db to cmd.
func dbFlag(cmd *cobra.Command, db *string) {
	cmd.Flags().StringVar(db, "db", defaultDB(),
		"the service's database: a SQLite file, or postgres://USER@HOST/DB for PostgreSQL (default from $"+EnvDB+")")
}

// tenantFlag adds --tenant to fs, for a command that may leave it out
// (stack.tenantFor).
func tenantFlag(fs *pflag.FlagSet, tenant *string) {
	fs.StringVar(tenant, "tenant", "", "the tenant (default: the only one, or the open tenant when there is none)")
}

// jobFlags are the worker settings serve, worker and eval share.
type jobFlags struct {
	workers     int
	chunk       int
	attempts    int
	rescueAfter time.Duration
	poll        time.Duration
	// scorerCache holds compiled WASM code and tenants' published modules.
	scorerCache string
}

func addJobFlags(cmd *cobra.Command, j *jobFlags, workers int) {
	f := cmd.Flags()
	f.IntVar(&j.workers, "workers", workers, "evaluation jobs this process runs at once (0: none; other processes work them)")
	f.IntVar(&j.chunk, "chunk", 200, "runs per evaluation job")
	f.IntVar(&j.attempts, "max-attempts", 5, "attempts of a job before its transient failures (judge errors, timeouts) are stored as failed")
	f.DurationVar(&j.rescueAfter, "rescue-after", 10*time.Minute, "give a job whose worker died to another worker after this long")
	f.DurationVar(&j.poll, "poll", time.Second, "how often workers look for jobs when not notified")
	f.StringVar(&j.scorerCache, "scorer-cache", "", "keep tenants' published WASM modules and their compiled code in DIR, shared by the processes of this machine (default: the user cache folder's scorekit/published)")
}

// addServiceFlags adds the flags of a command that opens the service with its workers
// (serve, worker, eval): the database, the host's scorers and judge, and the job settings.
func addServiceFlags(cmd *cobra.Command, db *string, ho *hostOptions, jf *jobFlags) {
	f := cmd.Flags()
	f.StringVar(&ho.config, "config", "", "JSON file with per-scorer configs and the judge (as for score)")
	f.DurationVar(&ho.timeout, "timeout", 30*time.Second, "deadline of one scorer call, above 0")
	dbFlag(cmd, db)
	addJobFlags(cmd, jf, 4)
	judgeFlags(f, &ho.judge)
	pluginDirsFlag(cmd, &ho.plugins)
}

func (j jobFlags) check() error {
	switch {
	case j.workers < 0:
		return fmt.Errorf("--workers %d: want 0 or more", j.workers)
	case j.chunk < 1:
		return fmt.Errorf("--chunk %d: want 1 or more", j.chunk)
	case j.attempts < 1:
		return fmt.Errorf("--max-attempts %d: want 1 or more", j.attempts)
	case j.rescueAfter < time.Second:
		return fmt.Errorf("--rescue-after %s: want at least 1s", j.rescueAfter)
	case j.poll < time.Millisecond:
		return fmt.Errorf("--poll %s: want at least 1ms", j.poll)
	}
	return nil
}

// stack is the evaluation service opened for one command.
type stack struct {
	svc   *service.Service
	close func(context.Context)
}

// openStack assembles the host with its scorers and judge, and opens the service on it
// with service.Open: the store at db (migrated) and the job engine, whose workers start
// when jobs.workers > 0. tune sets the Config fields of one command's own flags.
func (e *env) openStack(ctx context.Context, db string, ho hostOptions, jf jobFlags, tune ...func(*service.Config)) (*stack, error) {
	if err := jf.check(); err != nil {
		return nil, err
	}
	if ho.timeout == 0 {
		ho.timeout = 30 * time.Second
	}
	keyring, err := operatorSecrets()
	if err != nil {
		return nil, err
	}
	hp, err := e.assembleHost(ctx, ho)
	if err != nil {
		return nil, err
	}
	cfg := service.Config{
		DB:      db,
		Host:    hp.host,
		Judge:   hp.judge,
		Secrets: keyring,
		Jobs: jobs.Options{
			Workers: jf.workers, ChunkSize: jf.chunk, MaxAttempts: jf.attempts, RescueAfter: jf.rescueAfter,
			PollInterval: jf.poll, Logger: e.logger(), Telemetry: ho.telemetry,
		},
		Publish: service.PublishConfig{CacheDir: jf.scorerCache},
	}
	for _, f := range tune {
		f(&cfg)
	}
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		_ = hp.close(ctx)
		return nil, fmt.Errorf("--db %s: %w", db, err)
	}
	s := &stack{svc: svc}
	s.close = func(ctx context.Context) {
		if err := svc.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(e.stderr, "scorekit: %v\n", err)
		}
		_ = hp.close(ctx)
	}
	return s, nil
}

// Environment variables of the operator's secret key, which seals the API keys tenants
// store for judge endpoints. A key is read from the environment only, never from a flag
// (other users of the machine see a command line) nor from the config file.
const (
	EnvSecretKey    = "SCOREKIT_SECRET_KEY"
	EnvSecretKeyOld = "SCOREKIT_SECRET_KEY_OLD"
)

// operatorSecrets is the keyring of $SCOREKIT_SECRET_KEY and, during a rotation, the old
// keys in $SCOREKIT_SECRET_KEY_OLD (comma-separated); nil when the first is not set.
func operatorSecrets() (*secrets.Keyring, error) {
	cur := os.Getenv(EnvSecretKey)
	if cur == "" {
		if os.Getenv(EnvSecretKeyOld) != "" {
			return nil, fmt.Errorf("$%s is set but $%s is not: set the new key in %s (the old one opens what it sealed)", EnvSecretKeyOld, EnvSecretKey, EnvSecretKey)
		}
		return nil, nil
	}
	var old []string
	for _, o := range strings.Split(os.Getenv(EnvSecretKeyOld), ",") {
		if o = strings.TrimSpace(o); o != "" {
			old = append(old, o)
		}
	}
	k, err := secrets.New(cur, old...)
	if err != nil {
		return nil, fmt.Errorf("$%s or $%s: %w", EnvSecretKey, EnvSecretKeyOld, err)
	}
	return k, nil
}

// warnSecrets says at start which tenants' stored judge keys do not open with the
// operator's secret key: those tenants' calls there fail until it is fixed.
func (e *env) warnSecrets(ctx context.Context, svc *service.Service) {
	problems, err := svc.SecretProblems(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "scorekit: warning: cannot check the tenants' judge keys: %v\n", err)
		return
	}
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "scorekit: warning: a tenant's judge key cannot be used (its calls to that endpoint fail until this is fixed): %s\n", p)
	}
}

// tenantFor resolves --tenant: the named tenant; without a name, the only tenant, or the
// open tenant when there is none.
func (s *stack) tenantFor(ctx context.Context, name string) (store.Tenant, error) {
	if name != "" {
		return s.svc.Tenant(ctx, name)
	}
	ts, err := s.svc.Tenants(ctx)
	if err != nil {
		return store.Tenant{}, err
	}
	switch len(ts) {
	case 0:
		return s.svc.Open(ctx)
	case 1:
		return ts[0], nil
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return store.Tenant{}, fmt.Errorf("the database has %d tenants (%v): choose one with --tenant NAME", len(ts), names)
}
