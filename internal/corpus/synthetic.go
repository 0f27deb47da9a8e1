package corpus

import (
	"fmt"

	"github.com/scorekit/scorekit/sdk"
)

// syntheticQuestions are the inputs of the synthetic broken runs: ordinary requests, so the
// only thing wrong with each run is its output.
func syntheticQuestions() []string {
	return []string{
		"What is the capital of France?",
		"Summarize the attached incident report in three bullet points.",
		"How many users signed up last week?",
		"List my agents",
		"Draft a reply to the customer asking for a refund.",
	}
}

// syntheticErrors are outputs that real agent runs produce when a call fails: provider
// errors, HTTP error pages, error JSON and stack traces in several languages.
func syntheticErrors() []string {
	return []string{
		`Error code: 429 - {'error': {'message': 'Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29768, Requested 1203. Please try again in 1.942s.', 'type': 'tokens', 'param': None, 'code': 'rate_limit_exceeded'}}`,
		`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
		"Traceback (most recent call last):\n  File \"/app/agent/run.py\", line 88, in invoke\n    result = chain.invoke({\"question\": q})\n  File \"/usr/lib/python3.11/site-packages/langchain_core/runnables/base.py\", line 2499, in invoke\n    input = step.invoke(input, config)\nopenai.APITimeoutError: Request timed out.",
		"Exception in thread \"main\" java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"answer\" is null\n\tat com.acme.agent.Responder.render(Responder.java:42)\n\tat com.acme.agent.Main.main(Main.java:17)",
		"TypeError: Cannot read properties of undefined (reading 'content')\n    at formatReply (/srv/agent/dist/reply.js:31:24)\n    at async handler (/srv/agent/dist/index.js:118:5)",
		"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x4b2f1a]\n\ngoroutine 1 [running]:\nmain.answer(...)\n\t/src/agent/main.go:57 +0x1a",
		"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>",
		"anthropic.APIStatusError: {'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}}",
		"Error: This model's maximum context length is 8192 tokens. However, your messages resulted in 9310 tokens. Please reduce the length of the messages.",
		"Request failed with status code 504: Gateway Timeout",
		"System.Net.Http.HttpRequestException: Response status code does not indicate success: 503 (Service Unavailable).\n   at System.Net.Http.HttpResponseMessage.EnsureSuccessStatusCode()\n   at Acme.Agent.Client.AskAsync(String prompt) in /src/Client.cs:line 64",
		"ERROR: upstream request timeout",
	}
}

// loadSynthetic builds the synthetic empty and error runs. dir is unused: they live in code.
func loadSynthetic(string) ([]Case, error) {
	qs := syntheticQuestions()
	var out []Case
	for i, out0 := range []string{"", "   \n\t "} {
		for j, q := range qs[:3] {
			out = append(out, Case{Source: "synthetic_empty", Label: LabelEmpty, Run: sdk.Run{
				ID: fmt.Sprintf("synthetic_empty/%d.%d", i+1, j+1), Input: q, Output: out0}})
		}
	}
	for i, e := range syntheticErrors() {
		q := qs[i%len(qs)]
		out = append(out, Case{Source: "synthetic_error", Label: LabelError, Run: sdk.Run{
			ID: fmt.Sprintf("synthetic_error/%d", i+1), Input: q, Output: e}})
	}
	return out, nil
}
