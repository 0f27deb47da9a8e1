package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// serverFlags are how a scorers command reaches a running service: --server, and the
// key in the environment variable --key-env names ($SCOREKIT_KEY, as the labels
// commands), so that it never shows in the process list or the shell's history.
type serverFlags struct {
	url    string
	keyEnv string
	json   bool
}

func addServerFlags(cmd *cobra.Command, s *serverFlags) {
	f := cmd.Flags()
	f.StringVar(&s.url, "server", "", "the service's URL, e.g. http://localhost:8080 (required)")
	f.StringVar(&s.keyEnv, "key-env", EnvKey, "the environment variable that holds the tenant's API key (scorekit keys create)")
	f.BoolVar(&s.json, "json", false, "print the service's answer as JSON")
	_ = cmd.MarkFlagRequired("server")
}

// call sends body as JSON to the service and decodes its answer into out, as the labels
// commands do (target.call); a problem answer is an error with the service's detail.
func (s serverFlags) call(ctx context.Context, method, path string, body, out any) error {
	if os.Getenv(s.keyEnv) == "" {
		return fmt.Errorf("$%s is empty: set it to the tenant's API key (scorekit keys create --tenant NAME), or name another variable with --key-env", s.keyEnv)
	}
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	tg := target{server: s.url, keyEnv: s.keyEnv}
	return tg.call(ctx, method, path, "application/json", b, out)
}

// publishedVersion is the part of a published version the commands print.
type publishedVersion struct {
	Name       string          `json:"name"`
	Version    int             `json:"version"`
	Ref        string          `json:"ref"`
	Kind       string          `json:"kind"`
	Base       string          `json:"base,omitempty"`
	Config     json.RawMessage `json:"config,omitempty"`
	Digest     string          `json:"digest"`
	JudgeModel string          `json:"judge_model,omitempty"`
	Promoted   bool            `json:"promoted"`
	Deleted    bool            `json:"deleted"`
	CreatedAt  time.Time       `json:"created_at"`
	Gate       *promotionGate  `json:"gate,omitempty"`
	Promotions []struct {
		PromotedAt time.Time      `json:"promoted_at"`
		Gate       *promotionGate `json:"gate,omitempty"`
	} `json:"promotions,omitempty"`
}

// promotionGate is what the agreement gate said of a promotion, as far as the CLI
// prints it.
type promotionGate struct {
	Report struct {
		Reason string `json:"reason"`
	} `json:"report"`
	Override *struct {
		Reason string    `json:"reason"`
		By     string    `json:"by"`
		At     time.Time `json:"at"`
	} `json:"override,omitempty"`
}

func (e *env) writeGate(g *promotionGate) {
	fmt.Fprintf(e.stdout, "  gate: %s\n", g.Report.Reason)
	if o := g.Override; o != nil {
		fmt.Fprintf(e.stdout, "  overridden by %s at %s: %s\n", o.By, o.At.Format(time.RFC3339), o.Reason)
	}
}

func (e *env) writeVersions(vs []publishedVersion) {
	for _, v := range vs {
		state := ""
		switch {
		case v.Promoted:
			state = "  promoted"
		case v.Deleted:
			state = "  deleted"
		}
		what := v.Kind
		if v.Base != "" {
			what += " " + v.Base
		}
		fmt.Fprintf(e.stdout, "%s  %s  %s%s\n", v.Ref, what, v.Digest, state)
		if v.Gate != nil {
			e.writeGate(v.Gate)
		}
		for _, p := range v.Promotions {
			if p.Gate != nil && p.Gate.Override != nil {
				e.writeGate(p.Gate)
			}
		}
	}
}

// publishCommands are `scorers publish`, `scorers versions` and `scorers promote`, the
// tenant's side of publishing its own scorers to a running service.
func (e *env) publishCommands() []*cobra.Command {
	var (
		sf                   serverFlags
		module, base, config string
		manifestScorer       string
		memoryMiB, timeoutMS int
		replaces             bool
		vsf, psf             serverFlags
		override             string
	)
	publish := &cobra.Command{
		Use:   "publish NAME (--module FILE | --base SCORER) --server URL",
		Short: "Publish a new version of one of your scorers to a running service",
		Long: `Publish a new, immutable version of one of your tenant's scorers: a WASM module you
built (--module), or one of the service's scorers with your config pinned (--base and
--config). The key is read from $` + EnvKey + ` (or the variable --key-env names). The first version
of a new name is promoted at once; promote later versions with scorekit scorers promote after
comparing them (evaluate with "scorers": ["NAME@N"]).`,
		Example: `  export ` + EnvKey + `=sk_...
  scorekit scorers publish triage --module build/word_budget.wasm --server http://localhost:8080
  scorekit scorers publish strict --base rubric --config rubric.json --server http://localhost:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{"name": args[0]}
			if replaces {
				body["replaces"] = true
			}
			switch {
			case (module == "") == (base == ""):
				return errors.New("give --module FILE (a WASM scorer) or --base SCORER (a configured scorer)")
			case module != "":
				b, err := os.ReadFile(module)
				if err != nil {
					return fmt.Errorf("--module: %w", err)
				}
				body["module"] = b
				m := map[string]any{}
				if manifestScorer != "" {
					m["scorer"] = manifestScorer
				}
				lim := map[string]any{}
				if memoryMiB > 0 {
					lim["memory_mib"] = memoryMiB
				}
				if timeoutMS > 0 {
					lim["timeout_ms"] = timeoutMS
				}
				if len(lim) > 0 {
					m["limits"] = lim
				}
				if len(m) > 0 {
					body["manifest"] = m
				}
			default:
				body["base"] = base
			}
			if config != "" {
				raw := []byte(config)
				if !strings.HasPrefix(strings.TrimSpace(config), "{") {
					b, err := os.ReadFile(config)
					if err != nil {
						return fmt.Errorf("--config: %w (give a JSON object or a file holding one)", err)
					}
					raw = b
				}
				var c map[string]any
				if err := json.Unmarshal(raw, &c); err != nil {
					return fmt.Errorf("--config: %w; give a JSON object", err)
				}
				body["config"] = c
			}
			var v publishedVersion
			if err := sf.call(cmd.Context(), http.MethodPost, "/v1/scorers", body, &v); err != nil {
				return err
			}
			if sf.json {
				return writeJSON(e.stdout, v)
			}
			e.writeVersions([]publishedVersion{v})
			return nil
		},
	}
	f := publish.Flags()
	f.StringVar(&module, "module", "", "a WASM module (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared)")
	f.StringVar(&base, "base", "", "the service's scorer a configured scorer configures (rubric, json_valid, ...)")
	f.StringVar(&config, "config", "", "the config pinned in the version: a JSON object, or a file holding one")
	f.StringVar(&manifestScorer, "scorer", "", "the scorer of the module to publish, when it carries several")
	f.IntVar(&memoryMiB, "memory-mib", 0, "the module's memory limit (within the service's ceiling)")
	f.IntVar(&timeoutMS, "timeout-ms", 0, "the deadline of one call of the module (within the service's ceiling)")
	f.BoolVar(&replaces, "replaces", false, "replace the service's scorer of the same name, for your tenant only, once promoted")
	addServerFlags(publish, &sf)

	versions := &cobra.Command{
		Use:     "versions NAME --server URL",
		Short:   "List the versions of one of your published scorers, and which one is promoted",
		Example: `  scorekit scorers versions triage --server http://localhost:8080`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var vs []publishedVersion
			if err := vsf.call(cmd.Context(), http.MethodGet, "/v1/scorers/"+url.PathEscape(args[0])+"/versions", nil, &vs); err != nil {
				return err
			}
			if vsf.json {
				return writeJSON(e.stdout, vs)
			}
			e.writeVersions(vs)
			return nil
		},
	}
	addServerFlags(versions, &vsf)

	promote := &cobra.Command{
		Use:   "promote NAME@N --server URL",
		Short: "Make the plain name of one of your scorers follow version N (an older N is the rollback)",
		Example: `  scorekit scorers promote triage@2 --server http://localhost:8080
  scorekit scorers promote triage@1 --server http://localhost:8080   # roll back
  scorekit scorers promote triage@3 --override "the labels predate the new policy" --server http://localhost:8080`,
		Long: `Make the plain name of one of your scorers follow version N. When your tenant's policy sets
promotion_gate, version N must agree with your labels at least as well as the version it
replaces (docs/AGREEMENT.md); a refused promotion goes through with --override REASON, which
is recorded with the promotion.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, n, ok := strings.Cut(args[0], "@")
			if _, err := strconv.Atoi(n); !ok || err != nil {
				return fmt.Errorf("%q: name the version as NAME@N (scorekit scorers versions NAME lists them)", args[0])
			}
			var body any
			if override != "" {
				body = map[string]string{"override": override}
			}
			var v publishedVersion
			if err := psf.call(cmd.Context(), http.MethodPost, "/v1/scorers/"+url.PathEscape(name)+"/versions/"+n+"/promote", body, &v); err != nil {
				return err
			}
			if psf.json {
				return writeJSON(e.stdout, v)
			}
			e.writeVersions([]publishedVersion{v})
			return nil
		},
	}
	addServerFlags(promote, &psf)
	promote.Flags().StringVar(&override, "override", "", "promote a version the agreement gate refuses, saying why (recorded)")
	return []*cobra.Command{publish, versions, promote}
}
