package wasm

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/wasmabi"
)

const wasiModule = "wasi_snapshot_preview1"

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// signature is a function type: params then results.
type signature struct{ params, results []api.ValueType }

func (s signature) String() string {
	names := func(ts []api.ValueType) string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = api.ValueTypeName(t)
		}
		return strings.Join(out, ", ")
	}
	return "(" + names(s.params) + ") -> (" + names(s.results) + ")"
}

func (s signature) matches(d api.FunctionDefinition) bool {
	return slices.Equal(s.params, d.ParamTypes()) && slices.Equal(s.results, d.ResultTypes())
}

// hostFunctions are the functions of the scorekit_v1 import module.
var hostFunctions = map[string]signature{
	wasmabi.ImportJudgeComplete: {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	wasmabi.ImportJudgeEmbed:    {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	wasmabi.ImportReplyRead:     {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	wasmabi.ImportLog:           {[]api.ValueType{i32, i32, i32}, nil},
}

// hostFunctionsV2 are the functions of the scorekit_v2 import module (ABI v2).
var hostFunctionsV2 = map[string]signature{
	wasmabi.ImportResult: {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
}

// scoreBatchSignature is ABI v2's score_batch export's.
var scoreBatchSignature = signature{[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}}

// requiredExports are the functions every ABI v1 guest exports, besides its memory.
var requiredExports = map[string]signature{
	wasmabi.ExportAlloc:     {[]api.ValueType{i32}, []api.ValueType{i32}},
	wasmabi.ExportInfo:      {nil, []api.ValueType{i64}},
	wasmabi.ExportConfigure: {[]api.ValueType{i32, i32, i32}, []api.ValueType{i64}},
	wasmabi.ExportScore:     {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i64}},
}

// codecsSignature is the optional codecs export's.
var codecsSignature = signature{nil, []api.ValueType{i32}}

var abiExport = regexp.MustCompile(`^scorekit_v(\d+)_`)

// checkModule refuses, before anything is instantiated, a module that imports what the
// sandbox does not grant or does not export ABI v1. WASI is granted except sockets; the
// WASI configuration itself grants no files, environment or arguments.
func checkModule(cm wazero.CompiledModule) error {
	for _, d := range cm.ImportedFunctions() {
		mod, name, _ := d.Import()
		switch {
		case mod == wasiModule && strings.HasPrefix(name, "sock_"):
			return fmt.Errorf("%w %s.%s: plugins get no network; remove the socket calls from the guest", ErrForbiddenImport, mod, name)
		case mod == wasiModule:
		case mod == wasmabi.ABIModule || mod == wasmabi.ABIModuleV2:
			fns := hostFunctions
			if mod == wasmabi.ABIModuleV2 {
				fns = hostFunctionsV2
			}
			sig, ok := fns[name]
			if !ok {
				return fmt.Errorf("%w %s.%s: the host provides %s; see docs/ABI.md", ErrForbiddenImport, mod, name, keys(fns))
			}
			if !sig.matches(d) {
				return fmt.Errorf("%w %s.%s: want signature %s; see docs/ABI.md", ErrForbiddenImport, mod, name, sig)
			}
		default:
			return fmt.Errorf("%w %s.%s: a plugin may import only %s, %s and %s (no sockets); remove the import or build for GOOS=wasip1 / wasm32-wasi",
				ErrForbiddenImport, mod, name, wasmabi.ABIModule, wasmabi.ABIModuleV2, wasiModule)
		}
	}
	for _, d := range cm.ImportedMemories() {
		mod, name, _ := d.Import()
		return fmt.Errorf("%w: memory %s.%s: a plugin must define and export its own memory", ErrForbiddenImport, mod, name)
	}
	exports := cm.ExportedFunctions()
	for name := range exports {
		if m := abiExport.FindStringSubmatch(name); m != nil && m[1] != "1" && name != wasmabi.ExportScoreBatch {
			return fmt.Errorf("%w: the module exports %s, a name of ABI v%s this host does not know (it speaks ABI v1, and v2's %s); rebuild the plugin against the current sdk or docs/ABI.md",
				host.ErrABIMismatch, name, m[1], wasmabi.ExportScoreBatch)
		}
	}
	if d, ok := exports[wasmabi.ExportScoreBatch]; ok && !scoreBatchSignature.matches(d) {
		return fmt.Errorf("%w %s: signature %s, want %s; see docs/ABI.md", ErrMissingExport, wasmabi.ExportScoreBatch,
			signature{d.ParamTypes(), d.ResultTypes()}, scoreBatchSignature)
	}
	for _, name := range keys(requiredExports) {
		sig := requiredExports[name]
		d, ok := exports[name]
		if !ok {
			return fmt.Errorf("%w %s: an ABI v1 guest exports %s; see docs/ABI.md (Go guests: build with serve.Register and -buildmode=c-shared)",
				ErrMissingExport, name, keys(requiredExports))
		}
		if !sig.matches(d) {
			return fmt.Errorf("%w %s: signature %s, want %s; see docs/ABI.md", ErrMissingExport, name, signature{d.ParamTypes(), d.ResultTypes()}, sig)
		}
	}
	if d, ok := exports[wasmabi.ExportCodecs]; ok && !codecsSignature.matches(d) {
		return fmt.Errorf("%w %s: signature %s, want %s; see docs/ABI.md", ErrMissingExport, wasmabi.ExportCodecs,
			signature{d.ParamTypes(), d.ResultTypes()}, codecsSignature)
	}
	if _, ok := cm.ExportedMemories()["memory"]; !ok {
		return fmt.Errorf("%w memory: export the linear memory as \"memory\"; see docs/ABI.md", ErrMissingExport)
	}
	return nil
}

func keys(m map[string]signature) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// initialPages is the initial size, in 64 KiB pages, of the memory bin defines, read before
// compiling so that a module starting over its limit is refused with the limit named
// (wazero's compiler refuses it too, as an invalid module). ok is false when bin defines
// no memory or cannot be read (the compiler then says why).
func initialPages(bin []byte) (pages uint64, ok bool) {
	secs, err := splitSections(bin)
	if err != nil {
		return 0, false
	}
	for _, s := range secs {
		if s.id != secMemory {
			continue
		}
		r := &reader{b: s.payload}
		if r.u32() == 0 {
			return 0, false
		}
		r.byte() // flags
		pages = uint64(r.u32())
		return pages, r.err == nil
	}
	return 0, false
}
