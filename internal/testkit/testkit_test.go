package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// Writers and a reader at once: every line written is in the buffer, whole.
func TestSyncBufferKeepsConcurrentWrites(t *testing.T) {
	var buf testkit.SyncBuffer
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(&buf, "writer %d line %d\n", w, i)
			}
		})
	}
	wg.Go(func() {
		for range lines {
			_ = buf.String()
		}
	})
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	seen := map[string]bool{}
	for _, l := range got {
		seen[l] = true
	}
	for w := range writers {
		for i := range lines {
			if l := fmt.Sprintf("writer %d line %d", w, i); !seen[l] {
				t.Fatalf("%q is missing or torn", l)
			}
		}
	}
}

// A Scorer is one the host registers, opens and scores with as it is: it scores 1 unless
// ScoreFunc, when set, says otherwise.
func TestScorerRunsThroughTheHost(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	info := func(name string) sdk.Info {
		return sdk.Info{Name: name, Version: "1.0.0", ABIVersion: sdk.ABIVersion, Range: sdk.Unit, Threshold: 0.5}
	}
	reg := host.NewRegistry()
	for _, s := range []testkit.Scorer{
		{Meta: info("plain")},
		{Meta: info("custom"), ScoreFunc: func(_ context.Context, call sdk.Call) (sdk.Result, error) {
			if call.Run.Output == "fail" {
				return sdk.Result{}, boom
			}
			return sdk.Scored(0.25, "custom: "+call.Run.Output), nil
		}},
	} {
		if err := reg.Register(host.Native(func() sdk.Scorer { return s }), false); err != nil {
			t.Fatalf("register %s: %v", s.Meta.Name, err)
		}
	}
	h := host.New(reg)
	score := func(name, output string) sdk.Result {
		t.Helper()
		sc, err := h.Open(ctx, name, host.OpenOptions{})
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		defer sc.Close(ctx)
		return sc.Score(ctx, sdk.Run{ID: "r", Input: "q", Output: output})
	}
	if r := score("plain", "a"); r.Status != sdk.StatusScored || *r.Score != 1 || r.Reason != "ok" {
		t.Errorf("plain: %+v, want scored 1 ok", r)
	}
	if r := score("custom", "a"); r.Status != sdk.StatusScored || *r.Score != 0.25 || r.Reason != "custom: a" {
		t.Errorf("custom: %+v, want scored 0.25 by ScoreFunc", r)
	}
	if r := score("custom", "fail"); r.Status != sdk.StatusFailed || r.Error == nil || !strings.Contains(r.Error.Message, "boom") {
		t.Errorf("custom on fail: %+v, want failed with ScoreFunc's error", r)
	}
}
