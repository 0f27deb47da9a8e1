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
// applies), and only for the capability the scorer declared in its Info at load.
type judgeServer struct {
	pluginpb.UnimplementedJudgeServer
	info sdk.Info

	mu    sync.Mutex
	next  uint64
	calls map[uint64]judgeCall
}

type judgeCall struct {
	ctx   context.Context
	judge sdk.Judge
}

// begin registers a call and returns its id.
func (s *judgeServer) begin(ctx context.Context, j sdk.Judge) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.calls[s.next] = judgeCall{ctx: ctx, judge: j}
	return s.next
}

func (s *judgeServer) end(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.calls, id)
}

// allow finds the call id and checks that the scorer declared capability c.
func (s *judgeServer) allow(id uint64, c sdk.Capability) (judgeCall, *pluginpb.Error) {
	if !s.info.Has(c) {
		return judgeCall{}, &pluginpb.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf(
			"judge denied: scorer %q did not declare the %q capability in its Info; add sdk.Cap%s to Info.Capabilities to use the host's judge",
			s.info.Name, c, capName(c))}
	}
	s.mu.Lock()
	call, ok := s.calls[id]
	s.mu.Unlock()
	if !ok {
		return judgeCall{}, &pluginpb.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf(
			"judge denied: no call %d in progress; a plugin may use the judge only while it answers a Score call", id)}
	}
	return call, nil
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
	call, deny := s.allow(req.GetCall(), sdk.CapJudge)
	if deny != nil {
		return &pluginpb.CompleteResponse{Error: deny}, nil
	}
	var reqs []sdk.CompletionRequest
	if err := json.Unmarshal(req.GetRequestsJson(), &reqs); err != nil {
		return &pluginpb.CompleteResponse{Error: &pluginpb.Error{Code: sdk.CodeJudgeError,
			Message: "decode judge requests: " + err.Error() + "; send a JSON array of sdk.CompletionRequest"}}, nil
	}
	ctx, cancel := callContext(call, rpc)
	defer cancel()
	out, err := call.judge.Complete(ctx, reqs)
	if err != nil {
		return &pluginpb.CompleteResponse{Error: judgeErr(err)}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return &pluginpb.CompleteResponse{Error: &pluginpb.Error{Code: sdk.CodeJudgeError, Message: "encode judge responses: " + err.Error()}}, nil
	}
	return &pluginpb.CompleteResponse{ResponsesJson: b}, nil
}

func (s *judgeServer) Embed(rpc context.Context, req *pluginpb.EmbedRequest) (*pluginpb.EmbedResponse, error) {
	call, deny := s.allow(req.GetCall(), sdk.CapEmbed)
	if deny != nil {
		return &pluginpb.EmbedResponse{Error: deny}, nil
	}
	ctx, cancel := callContext(call, rpc)
	defer cancel()
	vecs, err := call.judge.Embed(ctx, req.GetTexts())
	if err != nil {
		return &pluginpb.EmbedResponse{Error: judgeErr(err)}, nil
	}
	out := make([]*pluginpb.Vector, len(vecs))
	for i, v := range vecs {
		out[i] = &pluginpb.Vector{Values: v}
	}
	return &pluginpb.EmbedResponse{Vectors: out}, nil
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
