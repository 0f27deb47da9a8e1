// Command goguest is a Go guest purpose-built for the sandbox tests: its "tester" scorer
// misbehaves on command (the run's input names the misbehaviour), "asker" uses the judge,
// and "picky" takes a config.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o goguest.wasm ./testdata/goguest
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/scorekit/scorekit/internal/wasmabi"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/serve"
)

var _ = serve.Register(
	func() sdk.Scorer { return tester{} },
	func() sdk.Scorer { return asker{} },
	func() sdk.Scorer { return &picky{} },
)

func main() { serve.Main() }

func info(name string, caps ...sdk.Capability) sdk.Info {
	return sdk.Info{Name: name, Version: "1.0.0", ABIVersion: sdk.ABIVersion, Description: "test guest",
		Range: sdk.Unit, Threshold: 0.5, Capabilities: caps}
}

type tester struct{}

// hoard keeps what the memory bomb allocates reachable.
var hoard [][]byte

func (tester) Info() sdk.Info { return info("tester") }

func (tester) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	switch call.Run.Input {
	case "spin":
		for {
		}
	case "bomb":
		for { // touch every page, so the memory is really resident
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
	case "crumbs": // small reachable objects: the collector runs ever longer as they pile up
		var crumbs [][]byte
		for {
			crumbs = append(crumbs, make([]byte, 64))
			hoard = crumbs
		}
	case "hold": // 24 MiB, touched, then wait for the deadline
		for range 24 {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
		time.Sleep(time.Hour)
		return sdk.Scored(1, "held"), nil
	case "sleep":
		time.Sleep(time.Hour)
		return sdk.Scored(1, "woke up"), nil
	case "nap": // most of a short deadline, as a batch's every run may take
		time.Sleep(150 * time.Millisecond)
		return sdk.Scored(1, "napped"), nil
	case "churn": // most of a short deadline, busy
		for start := time.Now(); time.Since(start) < 150*time.Millisecond; {
		}
		return sdk.Scored(1, "churned"), nil
	case "random":
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return sdk.Result{}, err
		}
		return sdk.Scored(1, hex.EncodeToString(b[:])), nil
	case "panic":
		panic("tester was told to panic")
	case "exit":
		os.Exit(3)
	case "flood":
		line := strings.Repeat("x", 1023) + "\n"
		for range 10 << 10 {
			fmt.Print(line)
		}
		return sdk.Scored(1, "flooded 10 MiB"), nil
	case "huge":
		return sdk.Scored(1, strings.Repeat("y", 4<<20)), nil
	case "sneak":
		return sneak(), nil
	case "log":
		slog.Warn("tester logs", "answer", 42)
		return sdk.Scored(1, "logged"), nil
	}
	words := len(strings.Fields(call.Run.Output))
	return sdk.Scored(float64(min(words, 10))/10, fmt.Sprintf("%d words", words)), nil
}

//go:wasmimport scorekit_v1 judge_complete
func judgeComplete(ptr unsafe.Pointer, size uint32) uint32

//go:wasmimport scorekit_v1 reply_read
func replyRead(ptr unsafe.Pointer, size uint32) uint32

// sneak calls the judge through the raw import although tester did not declare it, and
// reports the host's reply as the result's reason.
func sneak() sdk.Result {
	req := []byte(`[{"messages":[{"role":"user","content":"hi"}]}]`)
	n := judgeComplete(unsafe.Pointer(&req[0]), uint32(len(req)))
	buf := make([]byte, n)
	buf = buf[:replyRead(unsafe.Pointer(&buf[0]), n)]
	var r wasmabi.Reply
	if err := json.Unmarshal(buf, &r); err != nil || r.Error == nil {
		return sdk.Scored(1, "judge answered: "+string(buf))
	}
	return sdk.Failed(r.Error.Code, r.Error.Message)
}

type asker struct{}

func (asker) Info() sdk.Info { return info("asker", sdk.CapJudge) }

func (asker) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if call.Judge == nil {
		return sdk.NoJudge("asker"), nil
	}
	resp, err := sdk.Ask(ctx, call.Judge, "", call.Run.Input)
	if err != nil {
		return sdk.Result{}, err
	}
	vecs, err := call.Judge.Embed(ctx, []string{call.Run.Output})
	if err == nil {
		return sdk.Result{}, fmt.Errorf("embed succeeded without the embed capability (%d vectors)", len(vecs))
	}
	return sdk.Scored(1, resp.Content+" | embed: "+err.Error()), nil
}

type picky struct{ Min int }

func (*picky) Info() sdk.Info { return info("picky") }

func (p *picky) Configure(config json.RawMessage) error {
	if len(config) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(config)))
	dec.DisallowUnknownFields()
	var c struct {
		Min int `json:"min"`
	}
	if err := dec.Decode(&c); err != nil {
		return &sdk.Error{Code: sdk.CodeInvalidConfig, Message: "picky config: " + err.Error()}
	}
	p.Min = c.Min
	return nil
}

func (p *picky) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if len(call.Run.Output) < p.Min {
		return sdk.Scored(0, fmt.Sprintf("output shorter than %d", p.Min)), nil
	}
	return sdk.Scored(1, fmt.Sprintf("output at least %d long", p.Min)), nil
}
