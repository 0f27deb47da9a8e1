package pythontest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// probeManifest describes testdata/probe.py, whose scorers misbehave on purpose.
func probeManifest(t testing.TB) host.Manifest {
	t.Helper()
	pythonExe(t)
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := fileSum(filepath.Join(dir, "probe.py"))
	if err != nil {
		t.Fatal(err)
	}
	return host.Manifest{Name: "probes", Runtime: host.RuntimeProcess, Artifact: "probe.py", SHA256: sum, Dir: dir,
		Env: map[string]string{"PYTHONPATH": sdkSrc(t)}, Read: []string{sdkSrc(t)}}
}

func byName(ps []host.Plugin) map[string]host.Plugin {
	out := map[string]host.Plugin{}
	for _, p := range ps {
		out[p.Info().Name] = p
	}
	return out
}

// TestPythonFailures: what a Python scorer raises or returns wrong is a failed result with
// the reason and the most specific code, never a score of 0, and the process goes on.
func TestPythonFailures(t *testing.T) {
	ps := byName(load(t, probeManifest(t), confined(&logBuffer{t: t})))
	for _, tt := range []struct {
		scorer, code, message string
	}{
		{"probe_raises", sdk.CodeScorerError, "ValueError: the probe could not read Paris"},
		{"probe_raises_code", sdk.CodeInvalidRun, "the run has no passage to check; add context"},
		{"probe_nan", sdk.CodeInvalidResult, "scorer probe_nan returned an invalid result: score is nan"},
		{"probe_nothing", sdk.CodeInvalidResult, "scorer probe_nothing returned NoneType; return a Result"},
	} {
		t.Run(tt.scorer, func(t *testing.T) {
			s := open(t, ps[tt.scorer], "")
			for range 2 { // the process serves the next call too
				res := s.Score(context.Background(), sdk.Run{Input: "q", Output: "Paris"})
				if res.Status != sdk.StatusFailed || res.Score != nil || res.Error == nil || res.Error.Code != tt.code || !strings.Contains(res.Error.Message, tt.message) {
					t.Fatalf("got %+v (error %+v), want failed %s: %s", res, res.Error, tt.code, tt.message)
				}
			}
		})
	}
}

// TestPythonSandbox: a Python plugin under the host's sandbox reaches no network (not even
// a port on the host's loopback), no file outside its folders and no credential of the
// host's environment.
func TestPythonSandbox(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-host-secret-5f2e")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted sync.WaitGroup
	accepted.Add(1)
	reached := false
	go func() {
		defer accepted.Done()
		if c, err := ln.Accept(); err == nil {
			reached = true
			c.Close()
		}
	}()
	ps := byName(load(t, probeManifest(t), confined(&logBuffer{t: t})))
	s := open(t, ps["probe_escape"], "")
	res := s.Score(context.Background(), sdk.Run{Input: ln.Addr().String(), Output: filepath.Join(repoRoot(t), "go.mod")})
	if res.Status != sdk.StatusScored || res.Reason != "reached: nothing" {
		t.Errorf("the sandboxed Python plugin %s (%s)", res.Reason, res.Status)
	}
	ln.Close()
	accepted.Wait()
	if reached {
		t.Error("the sandboxed Python plugin connected to the host's loopback")
	}
}

type tenantKey struct{}

// recordingJudge answers every prompt with "verdict: PROMPT" and records the tenant of each
// call's context.
type recordingJudge struct {
	mu      sync.Mutex
	tenants []any
}

func (j *recordingJudge) Complete(ctx context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	j.mu.Lock()
	j.tenants = append(j.tenants, ctx.Value(tenantKey{}))
	j.mu.Unlock()
	out := make([]sdk.CompletionResponse, len(reqs))
	for i, r := range reqs {
		out[i] = sdk.CompletionResponse{Content: "verdict: " + r.Messages[len(r.Messages)-1].Content}
	}
	return out, nil
}

func (j *recordingJudge) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("not used")
}

// TestPythonJudge: on both transports (the Session stream, whose judge requests travel on
// the stream, and unary calls, whose judge is the host's Judge service dialled through
// go-plugin's broker), a Python scorer that declares the judge reaches the host's judge
// with the call's context, and one that does not is denied with a judge_error it fails on.
func TestPythonJudge(t *testing.T) {
	for _, unary := range []bool{false, true} {
		t.Run(map[bool]string{false: "session", true: "unary"}[unary], func(t *testing.T) {
			opts := confined(&logBuffer{t: t})
			opts.Unary = unary
			ps := byName(load(t, probeManifest(t), opts))
			ctx := context.WithValue(context.Background(), tenantKey{}, "tenant-a")

			j := &recordingJudge{}
			s := open(t, ps["probe_judged"], "", host.WithJudge(j))
			for i := range 3 {
				out := fmt.Sprint("answer ", i)
				res := s.Score(ctx, sdk.Run{Input: "q", Output: out})
				if res.Status != sdk.StatusScored || res.Reason != "verdict: "+out {
					t.Fatalf("call %d: %+v (error %+v)", i, res, res.Error)
				}
			}
			if len(j.tenants) != 3 || j.tenants[0] != "tenant-a" {
				t.Errorf("the judge saw tenants %v, want tenant-a three times", j.tenants)
			}

			// Through the host, a scorer that did not declare the judge gets none.
			denied := &recordingJudge{}
			s = open(t, ps["probe_sneaky"], "", host.WithJudge(denied))
			if res := s.Score(ctx, sdk.Run{Input: "q", Output: "x"}); res.Reason != "no judge given" {
				t.Fatalf("a scorer without the capability: %+v, want no judge given", res)
			}
			// Handed one anyway (the backend called directly), its requests are denied with
			// a judge_error it fails on.
			b, err := ps["probe_sneaky"].Open(ctx, host.Tenant{Name: "tenant-a"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(context.Background())
			_, err = b.Score(ctx, &sdk.Run{Input: "q", Output: "x"}, denied)
			if e := (*sdk.Error)(nil); !errors.As(err, &e) || e.Code != sdk.CodeJudgeError || !strings.Contains(e.Message, `did not declare the "judge" capability`) {
				t.Fatalf("err = %v, want a judge_error denial naming the capability", err)
			}
			if len(denied.tenants) != 0 {
				t.Errorf("the host's judge was called %d times for a scorer that did not declare it", len(denied.tenants))
			}
		})
	}
}
