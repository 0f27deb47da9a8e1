package process

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

func quietOptions() Options {
	return Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func perCall(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "us/call")
}

// BenchmarkScore compares one call of prescreen linked into the host with the same call to
// the heuristic process plugin, and a trivial call with and without a judge callback.
func BenchmarkScore(b *testing.B) {
	cases := loadCorpus(b)
	runs := make([]sdk.Run, len(cases))
	for i, c := range cases {
		runs[i] = c.Run
	}
	ctx := context.Background()

	var prescreen func() sdk.Scorer
	for _, f := range heuristic.Factories() {
		if f().Info().Name == "prescreen" {
			prescreen = f
		}
	}
	if prescreen == nil {
		b.Fatal("heuristic.Factories has no prescreen")
	}
	cases2 := []struct {
		name string
		p    host.Plugin
	}{{"prescreen/native", host.Native(prescreen)}}
	for _, tr := range transports {
		opts := quietOptions()
		opts.Unary = tr.unary
		loaded, err := Load(ctx, heuristicManifest(b), opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range loaded {
			defer p.Close(ctx)
			if p.Info().Name == "prescreen" {
				cases2 = append(cases2, struct {
					name string
					p    host.Plugin
				}{"prescreen/process-" + tr.name, p})
			}
		}
	}
	for _, tc := range cases2 {
		b.Run(tc.name, func(b *testing.B) {
			be, err := tc.p.Open(ctx, host.Tenant{Name: "bench"}, tc.p.Info().Defaults)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close(ctx)
			i := 0
			for b.Loop() {
				run := runs[i%len(runs)]
				i++
				if _, err := be.Score(ctx, &run, nil); err != nil {
					b.Fatal(err)
				}
			}
			perCall(b)
		})
	}

	for _, tr := range append(transports[:len(transports):len(transports)], struct {
		name  string
		unary bool
	}{"session-automtls", false}) {
		opts := quietOptions()
		opts.Unary = tr.unary
		opts.AutoMTLS = tr.name == "session-automtls"
		probes, err := Load(ctx, testManifest(b, "serve"), opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range probes {
			defer p.Close(ctx)
		}
		var probe host.Plugin
		for _, p := range probes {
			if p.Info().Name == "probe" {
				probe = p
			}
		}
		for _, tc := range []struct {
			name  string
			run   sdk.Run
			judge sdk.Judge
		}{
			{"small", sdk.Run{Input: "q", Output: "Paris"}, nil},
			{"small+judge-callback", sdk.Run{Input: "judge", Output: "Paris"}, &fakeJudge{}},
		} {
			b.Run(tc.name+"/process-"+tr.name, func(b *testing.B) {
				be, err := probe.Open(ctx, host.Tenant{Name: "bench"}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close(ctx)
				for b.Loop() {
					run := tc.run
					res, err := be.Score(ctx, &run, tc.judge)
					if err != nil || res.Status != sdk.StatusScored {
						b.Fatal(err, res.Reason)
					}
					if j, ok := tc.judge.(*fakeJudge); ok {
						j.tenants = j.tenants[:0]
					}
				}
				perCall(b)
			})
		}
	}
}

// BenchmarkStart measures Open (start a plugin process, handshake, configure) plus Close,
// with and without AutoMTLS.
func BenchmarkStart(b *testing.B) {
	ctx := context.Background()
	for _, mtls := range []bool{false, true} {
		name := "plain"
		if mtls {
			name = "automtls"
		}
		b.Run(name, func(b *testing.B) {
			opts := quietOptions()
			opts.AutoMTLS = mtls
			loaded, err := Load(ctx, heuristicManifest(b), opts)
			if err != nil {
				b.Fatal(err)
			}
			p := loaded[0]
			defer func() {
				for _, p := range loaded {
					p.Close(ctx)
				}
			}()
			for b.Loop() {
				be, err := p.Open(ctx, host.Tenant{Name: "bench"}, p.Info().Defaults)
				if err != nil {
					b.Fatal(err)
				}
				be.Close(ctx)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/start")
		})
	}
}

// BenchmarkGRPCBaseline is the floor of the unary path: an empty Info call to a started
// plugin over go-plugin's gRPC connection, with no JSON and no pool.
func BenchmarkGRPCBaseline(b *testing.B) {
	ctx := context.Background()
	probes, err := Load(ctx, testManifest(b, "serve"), quietOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer probes[0].Close(ctx)
	be, err := probes[0].Open(ctx, host.Tenant{Name: "bench"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close(ctx)
	pool := be.(*backend).pool
	pr, err := pool.acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.release(pr)
	for b.Loop() {
		if _, err := pr.conn.Scorer.Info(ctx, &pluginpb.InfoRequest{}); err != nil {
			b.Fatal(err)
		}
	}
	perCall(b)
}
