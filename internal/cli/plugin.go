package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
)

func (e *env) pluginCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Tools for scorer authors: write a plugin's manifest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("plugin: name a subcommand: manifest (see scorekit plugin --help)")
		},
	}
	cmd.AddCommand(e.manifestCommand())
	return cmd
}

type manifestOptions struct {
	out, name, runtime string
	replaces           []string
	env, read          []string
	memoryMiB          int
	check              bool
}

func (e *env) manifestCommand() *cobra.Command {
	var o manifestOptions
	cmd := &cobra.Command{
		Use:   "manifest [flags] ARTIFACT",
		Short: "Write the manifest (NAME.plugin.json) that lets scorekit load a plugin, pinning its sha256",
		Long: `Write the manifest of a built plugin: a WASM module (GOOS=wasip1 GOARCH=wasm go build
-buildmode=c-shared) or a plugin executable (go build, or a script that speaks the process
protocol). The manifest pins the artifact's sha256, so scorekit refuses the artifact once
it changes: write the manifest again after every build.

The runtime is read from the artifact (a WASM module starts with "\0asm"); the manifest is
NAME.plugin.json next to the artifact unless -o says otherwise (its folder is created), and
the artifact path in it is relative to the manifest. Then the plugin is loaded once, to
check that it speaks the protocol, and its scorers are listed. Load it with
scorekit score --plugins DIR.`,
		Example: `  GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o build/mine.wasm ./plugin
  scorekit plugin manifest build/mine.wasm
  go build -o build/process/mine ./plugin
  scorekit plugin manifest -o build/process/mine.plugin.json build/process/mine
  scorekit plugin manifest --env PYTHONPATH=$HOME/lib/py --read $HOME/lib/py scorer.py`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.writeManifest(cmd.Context(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", "", "manifest to write (default: NAME"+host.ManifestSuffix+" next to the artifact)")
	f.StringVar(&o.name, "name", "", "plugin name (default: the manifest's name given by -o, else the artifact's base name without its extension)")
	f.StringVar(&o.runtime, "runtime", "", "wasm or process (default: read from the artifact)")
	f.StringSliceVar(&o.replaces, "replaces", nil, "scorers the plugin may replace (comma-separated; the manifest's \"replaces\"): without it, a plugin scorer named like one the host has is refused")
	f.StringArrayVar(&o.env, "env", nil, "NAME=VALUE a process plugin finds in its environment (the manifest's \"env\"; repeatable): the host starts it with nothing of its own")
	f.StringArrayVar(&o.read, "read", nil, "a path a process plugin may read besides its own folder and the system's (the manifest's \"read\"; repeatable), e.g. the libraries a script imports")
	f.IntVar(&o.memoryMiB, "memory-mib", 0, "the plugin's memory limit in MiB (the manifest's limits.memory_mib; default: the runtime's, 64 for WASM)")
	f.BoolVar(&o.check, "check", true, "load the plugin once and list its scorers")
	return cmd
}

func (e *env) writeManifest(ctx context.Context, artifact string, o manifestOptions) error {
	b, err := os.ReadFile(artifact)
	if err != nil {
		return fmt.Errorf("plugin manifest: %w", err)
	}
	if o.memoryMiB < 0 {
		return fmt.Errorf("plugin manifest: --memory-mib %d: want a number of MiB above 0, or 0 for the runtime's default", o.memoryMiB)
	}
	isWASM := bytes.HasPrefix(b, []byte("\x00asm"))
	switch o.runtime {
	case "":
		o.runtime = host.RuntimeProcess
		if isWASM {
			o.runtime = host.RuntimeWASM
		}
	case host.RuntimeWASM:
		if !isWASM {
			return fmt.Errorf("plugin manifest: --runtime wasm: %s is not a WebAssembly module (it does not start with \\0asm); build it with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared", artifact)
		}
	case host.RuntimeProcess:
	default:
		return fmt.Errorf("plugin manifest: --runtime %q: want %s or %s", o.runtime, host.RuntimeWASM, host.RuntimeProcess)
	}
	if o.name == "" && o.out != "" {
		o.name = strings.TrimSuffix(filepath.Base(o.out), host.ManifestSuffix)
	}
	if o.name == "" {
		o.name = strings.TrimSuffix(filepath.Base(artifact), filepath.Ext(artifact))
	}
	if o.out == "" {
		o.out = filepath.Join(filepath.Dir(artifact), o.name+host.ManifestSuffix)
	}
	if !strings.HasSuffix(o.out, host.ManifestSuffix) {
		return fmt.Errorf("plugin manifest: -o %s: a manifest's name must end in %s, or --plugins will not find it", o.out, host.ManifestSuffix)
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return fmt.Errorf("plugin manifest: %w", err)
	}
	absOut, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	absArtifact, err := filepath.Abs(artifact)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(absOut), absArtifact)
	if err != nil {
		return fmt.Errorf("plugin manifest: artifact %s relative to %s: %w", artifact, o.out, err)
	}
	env, read, err := processAccess(o, filepath.Dir(absOut))
	if err != nil {
		return fmt.Errorf("plugin manifest: %w", err)
	}
	sum := sha256.Sum256(b)
	m := host.Manifest{Name: o.name, Runtime: o.runtime, Artifact: filepath.ToSlash(rel), SHA256: hex.EncodeToString(sum[:]), Replaces: o.replaces,
		Env: env, Read: read, Limits: host.Limits{MemoryMiB: o.memoryMiB}}
	j, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.out, append(j, '\n'), 0o644); err != nil {
		return fmt.Errorf("plugin manifest: %w", err)
	}
	if !o.check {
		fmt.Fprintf(e.stdout, "wrote %s (%s, sha256 %s)\n", o.out, o.runtime, m.SHA256[:12])
		return nil
	}
	names, err := e.checkManifest(ctx, o.out)
	if err != nil {
		return fmt.Errorf("plugin manifest: wrote %s, but the plugin does not load: %w", o.out, err)
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s, sha256 %s): scorers %s\nload it with: scorekit score --plugins %s --scorers %s FILE.jsonl\n",
		o.out, o.runtime, m.SHA256[:12], strings.Join(names, ", "), filepath.Dir(o.out), strings.Join(names, ","))
	return nil
}

// processAccess reads --env (NAME=VALUE) and --read (paths that exist, written relative to
// the manifest's folder dir, as the host resolves them).
func processAccess(o manifestOptions, dir string) (map[string]string, []string, error) {
	if (len(o.env) > 0 || len(o.read) > 0) && o.runtime != host.RuntimeProcess {
		return nil, nil, fmt.Errorf("--env and --read are for process plugins; a %s plugin reads nothing outside its module", o.runtime)
	}
	var env map[string]string
	for _, kv := range o.env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, nil, fmt.Errorf("--env %q: want NAME=VALUE", kv)
		}
		if env == nil {
			env = map[string]string{}
		}
		env[name] = value
	}
	// The loader's own check, before anything is written: a manifest it would refuse is
	// not one to leave on disk.
	if err := process.CheckEnv(env); err != nil {
		return nil, nil, fmt.Errorf("--env: %w", err)
	}
	read := make([]string, 0, len(o.read))
	for _, p := range o.read {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, nil, fmt.Errorf("--read %s: %w; name a path that exists", p, err)
		}
		rel, err := filepath.Rel(dir, abs)
		if err != nil {
			rel = abs
		}
		read = append(read, filepath.ToSlash(rel))
	}
	if len(read) == 0 {
		read = nil
	}
	return env, read, nil
}

// checkManifest loads the plugin the manifest describes, on its own (a scorer it names like
// a built-in is not refused here: --replaces decides that where it is loaded), and returns
// its scorers' names.
func (e *env) checkManifest(ctx context.Context, manifest string) ([]string, error) {
	reg := host.NewRegistry()
	rt := &runtimes{log: e.logger()}
	defer rt.close(context.WithoutCancel(ctx))
	loaded, err := host.LoadPlugins(ctx, reg, []string{manifest}, host.LoadOptions{Loaders: rt.loaders(), Logger: rt.log})
	if err != nil {
		return nil, err
	}
	defer loaded.Close(context.WithoutCancel(ctx))
	if f := loaded.Failures; len(f) > 0 {
		return nil, f[0].Err
	}
	names := reg.Names()
	if len(names) == 0 {
		return nil, fmt.Errorf("it declares no scorer; register some with serve.Register")
	}
	return names, nil
}
