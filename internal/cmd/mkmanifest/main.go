// Command mkmanifest writes the plugin manifest of a freshly built artifact, pinning its
// sha256, so `make` can produce loadable plugins:
//
//	go run ./internal/cmd/mkmanifest -runtime wasm -replaces-builtin -o build/wasm/builtin.plugin.json build/wasm/builtin.wasm
//
// It is `scorekit plugin manifest --check=false` under the flags the make rules use; scorer
// authors use that command. -replaces-builtin marks a build of the built-in scorers, which
// replaces them (scorekit score --runtime wasm|process).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/scorekit/scorekit/internal/cli"
	"github.com/scorekit/scorekit/plugins/builtin"
)

func main() {
	fs := flag.NewFlagSet("mkmanifest", flag.ExitOnError)
	out := fs.String("o", "", "manifest to write (default: next to the artifact, NAME.plugin.json)")
	name := fs.String("name", "", "plugin name (default: the artifact's base name)")
	runtime := fs.String("runtime", "", "runtime: wasm or process (default: read from the artifact)")
	replacesBuiltin := fs.Bool("replaces-builtin", false, "the artifact is a build of the built-in scorers: let it replace each of them")
	memoryMiB := fs.String("memory-mib", "", "the plugin's memory limit in MiB")
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() != 1 {
		fmt.Fprintf(os.Stderr, "mkmanifest: want one artifact path, got %d arguments; usage: mkmanifest [-o FILE] [-name NAME] [-runtime R] ARTIFACT\n", fs.NArg())
		os.Exit(1)
	}
	args := []string{"plugin", "manifest", "--check=false"}
	for _, f := range []struct{ flag, v string }{{"--out", *out}, {"--name", *name}, {"--runtime", *runtime}, {"--memory-mib", *memoryMiB}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	if *replacesBuiltin {
		var names []string
		for _, f := range builtin.Factories() {
			names = append(names, f().Info().Name)
		}
		args = append(args, "--replaces", strings.Join(names, ","))
	}
	os.Exit(cli.Run(context.Background(), append(args, fs.Arg(0)), os.Stdin, os.Stdout, os.Stderr))
}
