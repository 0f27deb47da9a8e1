package process

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/sdk"
)

// judgeServer is the host's Judge service for one plugin process. A request is honoured
// only for a call in progress, with that call's judge and context (so the tenant's budget
// applies), and only for the capability the call's scorer declared in its Info at load.
type judgeServer struct {
	pluginpb.UnimplementedJudgeServer

	mu    sync.Mutex
	next  uint64
	calls map[uint64]judgeCall
}

type judgeCall struct {
	ctx   context.Context
	judge sdk.Judge
	info  sdk.Info // the scorer of the call
}

// begin registers a call of scorer info and returns its id.
func (s *judgeServer) begin(ctx context.Context, j sdk.Judge, info sdk.Info) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.calls[s.next] = judgeCall{ctx: ctx, judge: j, info: info}
	return s.next
}

func (s *judgeServer) end(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.calls, id)
}

// lookup finds the call in progress with id.
func (s *judgeServer) lookup(id uint64) (judgeCall, *pluginpb.Error) {
	s.mu.Lock()
	call, ok := s.calls[id]
	s.mu.Unlock()
	if !ok {
		return judgeCall{}, &pluginpb.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf(
			"judge denied: no call %d in progress; a plugin may use the judge only while it answers a Score call", id)}
	}
	return call, nil
}

// denyCap is the refusal of a judge request from a scorer whose Info (as read at Load)
// does not declare capability c, or nil.
func denyCap(info sdk.Info, c sdk.Capability) *pluginpb.Error {
	if info.Has(c) {
		return nil
	}
	return &pluginpb.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf(
		"judge denied: scorer %q did not declare the %q capability in its Info; add sdk.Cap%s to Info.Capabilities to use the host's judge",
		info.Name, c, capName(c))}
}

// deny is the refusal of a judge request for capability c, or nil when the scorer declared
// c and the call has a judge.
func deny(info sdk.Info, j sdk.Judge, c sdk.Capability) *pluginpb.Error {
	if e := denyCap(info, c); e != nil {
		return e
	}
	if j == nil {
		return &pluginpb.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf(
			"judge denied: the host gave scorer %q no judge for this call; it must return sdk.NoJudge when sdk.Call.Judge is nil", info.Name)}
	}
	return nil
}

func capName(c sdk.Capability) string {
	if c == sdk.CapEmbed {
		return "Embed"
	}
	return "Judge"
}

// callContext is the call's context (tenant, budget, deadline), also ended when the
// plugin gives up on the request.
func callContext(call judgeCall, rpc context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(call.ctx)
	stop := context.AfterFunc(rpc, cancel)
	return ctx, func() { stop(); cancel() }
}

func (s *judgeServer) Complete(rpc context.Context, req *pluginpb.CompleteRequest) (*pluginpb.CompleteResponse, error) {
	call, e := s.lookup(req.GetCall())
	if e != nil {
		return &pluginpb.CompleteResponse{Error: e}, nil
	}
	ctx, cancel := callContext(call, rpc)
	defer cancel()
	return complete(ctx, call.info, call.judge, req), nil
}

func (s *judgeServer) Embed(rpc context.Context, req *pluginpb.EmbedRequest) (*pluginpb.EmbedResponse, error) {
	call, e := s.lookup(req.GetCall())
	if e != nil {
		return &pluginpb.EmbedResponse{Error: e}, nil
	}
	ctx, cancel := callContext(call, rpc)
	defer cancel()
	return embed(ctx, call.info, call.judge, req), nil
}

// complete runs a plugin's batch of completions on j, after the capability check.
func complete(ctx context.Context, info sdk.Info, j sdk.Judge, req *pluginpb.CompleteRequest) *pluginpb.CompleteResponse {
	if e := deny(info, j, sdk.CapJudge); e != nil {
		return &pluginpb.CompleteResponse{Error: e}
	}
	var reqs []sdk.CompletionRequest
	if err := json.Unmarshal(req.GetRequestsJson(), &reqs); err != nil {
		return &pluginpb.CompleteResponse{Error: &pluginpb.Error{Code: sdk.CodeJudgeError,
			Message: "decode judge requests: " + err.Error() + "; send a JSON array of sdk.CompletionRequest"}}
	}
	out, err := j.Complete(ctx, reqs)
	if err != nil {
		return &pluginpb.CompleteResponse{Error: judgeErr(err)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return &pluginpb.CompleteResponse{Error: &pluginpb.Error{Code: sdk.CodeJudgeError, Message: "encode judge responses: " + err.Error()}}
	}
	return &pluginpb.CompleteResponse{ResponsesJson: b}
}

// embed runs a plugin's batch of embeddings on j, after the capability check.
func embed(ctx context.Context, info sdk.Info, j sdk.Judge, req *pluginpb.EmbedRequest) *pluginpb.EmbedResponse {
	if e := deny(info, j, sdk.CapEmbed); e != nil {
		return &pluginpb.EmbedResponse{Error: e}
	}
	vecs, err := j.Embed(ctx, req.GetTexts())
	if err != nil {
		return &pluginpb.EmbedResponse{Error: judgeErr(err)}
	}
	out := make([]*pluginpb.Vector, len(vecs))
	for i, v := range vecs {
		out[i] = &pluginpb.Vector{Values: v}
	}
	return &pluginpb.EmbedResponse{Vectors: out}
}

// judgeErr keeps the code of an *sdk.Error (limit_exceeded for a spent budget ...);
// anything else is a judge_error.
func judgeErr(err error) *pluginpb.Error {
	r := sdk.FailedErr(err)
	code := r.Error.Code
	if code == sdk.CodeScorerError {
		code = sdk.CodeJudgeError
	}
	return &pluginpb.Error{Code: code, Message: r.Error.Message}
}
