package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// EnvAPIKey names the environment variable the commands that talk to a running service
// read its API key from (a key on the command line would be in the shell's history and
// in ps).
const EnvAPIKey = "SCOREKIT_API_KEY"

// serverFlags are how a command reaches a running service.
type serverFlags struct {
	url    string
	keyEnv string
	json   bool
}

func addServerFlags(cmd *cobra.Command, s *serverFlags) {
	f := cmd.Flags()
	f.StringVar(&s.url, "server", "", "the service's URL, e.g. http://localhost:8080 (required)")
	f.StringVar(&s.keyEnv, "key-env", EnvAPIKey, "the environment variable that holds the tenant's API key")
	f.BoolVar(&s.json, "json", false, "print the service's answer as JSON")
	_ = cmd.MarkFlagRequired("server")
}

// call sends a request to the service and decodes its answer into out; a problem answer
// becomes an error with the service's detail.
func (s serverFlags) call(ctx context.Context, method, path string, body, out any) error {
	key := os.Getenv(s.keyEnv)
	if key == "" {
		return fmt.Errorf("$%s is empty: set it to the tenant's API key (scorekit keys create --tenant NAME), or name another variable with --key-env", s.keyEnv)
	}
	base, err := url.Parse(strings.TrimSuffix(s.url, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("--server %q: want the service's URL, e.g. http://localhost:8080", s.url)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base.String()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("--server %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var p struct {
			Detail string `json:"detail"`
			Code   string `json:"code"`
		}
		if json.Unmarshal(b, &p) == nil && p.Detail != "" {
			return fmt.Errorf("%s %s: %d %s: %s", method, path, resp.StatusCode, p.Code, p.Detail)
		}
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
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
	)
	publish := &cobra.Command{
		Use:   "publish NAME (--module FILE | --base SCORER) --server URL",
		Short: "Publish a new version of one of your scorers to a running service",
		Long: `Publish a new, immutable version of one of your tenant's scorers: a WASM module you
built (--module), or one of the service's scorers with your config pinned (--base and
--config). The key is read from $` + EnvAPIKey + ` (or the variable --key-env names). The first version
of a new name is promoted at once; promote later versions with scorekit scorers promote after
comparing them (evaluate with "scorers": ["NAME@N"]).`,
		Example: `  export ` + EnvAPIKey + `=sk_...
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
  scorekit scorers promote triage@1 --server http://localhost:8080   # roll back`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, n, ok := strings.Cut(args[0], "@")
			if _, err := strconv.Atoi(n); !ok || err != nil {
				return fmt.Errorf("%q: name the version as NAME@N (scorekit scorers versions NAME lists them)", args[0])
			}
			var v publishedVersion
			if err := psf.call(cmd.Context(), http.MethodPost, "/v1/scorers/"+url.PathEscape(name)+"/versions/"+n+"/promote", nil, &v); err != nil {
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
	return []*cobra.Command{publish, versions, promote}
}
