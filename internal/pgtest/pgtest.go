// Package pgtest starts a throwaway PostgreSQL cluster for tests and benchmarks: Debian's
// postgresql binaries on a temporary directory, listening on a unix socket only, stopped
// when the test ends. It is a real server, not a mock.
//
// initdb refuses to run as root, so when the test runs as root the cluster runs as the
// postgres user (runuser), as CI does.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// binDir returns where initdb and pg_ctl are: the newest of Debian's
// /usr/lib/postgresql/VERSION/bin (15 on Debian 12, 17 on Debian 13), else the folder of
// the initdb on PATH; "" when there is none.
func binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestVersion := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil || v <= bestVersion {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			best, bestVersion = d, v
		}
	}
	if best != "" {
		return best
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// Cluster is a running PostgreSQL cluster.
type Cluster struct {
	dir    string // holds data/, the socket and the log
	bin    string // the folder of initdb and pg_ctl
	runAs  string // "" or "postgres"
	nextDB atomic.Int64
}

// New starts a cluster and stops it when tb ends. It fails tb, naming the package to
// install, when PostgreSQL is not installed.
func New(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// Start starts a cluster. Call Stop when done.
func Start() (*Cluster, error) {
	bin := binDir()
	if bin == "" {
		return nil, fmt.Errorf("pgtest: PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH): apt-get install postgresql (make test installs it as root)")
	}
	dir, err := os.MkdirTemp("", "scorekit-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs the postgres user (apt-get install postgresql creates it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	if out, err := c.pg("initdb", "-D", c.data(), "-A", "trust", "-U", "scorekit", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v: %s", err, out)
	}
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", dir)
	if out, err := c.pg("pg_ctl", "-D", c.data(), "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: pg_ctl start: %v: %s\n%s", err, out, log)
	}
	return c, nil
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// pg returns the command that runs a PostgreSQL program, as the postgres user when root.
func (c *Cluster) pg(prog string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, prog)
	if c.runAs != "" {
		return exec.Command("runuser", append([]string{"-u", c.runAs, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// DSN returns the connection string of database db.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://scorekit@/%s?host=%s&sslmode=disable", db, c.dir)
}

// Database creates a new empty database and returns its DSN.
func (c *Cluster) Database(tb testing.TB) string {
	tb.Helper()
	dsn, err := c.NewDatabase()
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// NewDatabase creates a new empty database and returns its DSN.
func (c *Cluster) NewDatabase() (string, error) {
	name := fmt.Sprintf("db%d", c.nextDB.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return c.DSN(name), nil
}

// Stop stops the cluster and removes its directory.
func (c *Cluster) Stop() error {
	out, err := c.pg("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop").CombinedOutput()
	os.RemoveAll(c.dir)
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// shared is the package's cluster of Shared, started on first use.
var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns a cluster shared by the tests of a package, started on first use; the
// package's TestMain calls Main to stop it.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	shared.once.Do(func() { shared.c, shared.err = Start() })
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.c
}

// Main runs the package's tests and stops the Shared cluster, if one was started. Call it
// from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}
