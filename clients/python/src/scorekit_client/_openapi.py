"""The service's types, generated from openapi.json by clients/python/gen_types.py
(make python-client-types). Do not edit: change the API's Go types, run make generate."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, NotRequired, Optional, Tuple, TypedDict, Union

Adjustment = TypedDict("Adjustment", {
    "from": float,
    "rule": str,
    "target": str,
    "to": float,
})


class AgentSummary(TypedDict):
    """AgentSummary, as the service's OpenAPI document describes it."""
    last_run: str
    name: str
    runs: int


class AgentsPage(TypedDict):
    """AgentsPage, as the service's OpenAPI document describes it."""
    agents: Optional[List[AgentSummary]]
    next: NotRequired[str]


class AuditEntry(TypedDict):
    """AuditEntry, as the service's OpenAPI document describes it."""
    action: Literal["delete_run", "delete_agent", "delete_tenant", "retention", "export"]
    actor: str
    at: str
    detail: NotRequired[Any]
    id: int
    subject: str


class AuditOutputBody(TypedDict):
    """AuditOutputBody, as the service's OpenAPI document describes it."""
    entries: Optional[List[AuditEntry]]


class Cause(TypedDict):
    """Cause, as the service's OpenAPI document describes it."""
    code: NotRequired[str]
    count: int
    message: str
    status: str


class CitationAudit(TypedDict):
    """CitationAudit, as the service's OpenAPI document describes it."""
    citations: int
    hallucination_detected: bool
    invalid_citations: NotRequired[Optional[List[str]]]
    sentences: int
    uncited_sentences: int
    unsupported_citations: NotRequired[Optional[List[str]]]


class Confusion(TypedDict):
    """Confusion, as the service's OpenAPI document describes it."""
    both_fail: int
    both_pass: int
    false_alarms: int
    missed: int


Counts = TypedDict("Counts", {
    "failed": int,
    "from": str,
    "gross": int,
    "mean": NotRequired[float],
    "not_passed": int,
    "other_versions": NotRequired[int],
    "passed": int,
    "runs": int,
    "scored": int,
    "skipped": int,
    "to": str,
})


class CreateEvaluationInputBody(TypedDict):
    """CreateEvaluationInputBody, as the service's OpenAPI document describes it."""
    #: Per-scorer config for this evaluation.
    config: NotRequired[Dict[str, Dict[str, Any]]]
    #: Create nothing: answer 200 with the runs and scorers the evaluation would take and its
    #: judge_estimate (judge calls and tokens against the tenant's budget).
    dry_run: NotRequired[bool]
    #: How many of the agent's newest runs to evaluate (1 to the tenant's maximum).
    limit: int
    #: Scorers to run. Default: the agent policy's, else prescreen.
    scorers: NotRequired[Optional[List[str]]]
    #: Only runs at or after this time (RFC 3339).
    since: NotRequired[str]
    #: Run the scorers that need a judge only on runs the pre-screen passed. Default: the agent
    #: policy's, else false.
    tiered: NotRequired[bool]


class Deleted(TypedDict):
    """Deleted, as the service's OpenAPI document describes it."""
    evaluations: int
    insights: NotRequired[int]
    results: int
    runs: int


class Dimension(TypedDict):
    """Dimension, as the service's OpenAPI document describes it."""
    description: NotRequired[str]
    name: str
    weight: float


class Disagreement(TypedDict):
    """Disagreement, as the service's OpenAPI document describes it."""
    agent: str
    evaluation_id: str
    kind: Literal["pass_fail", "score"]
    labels: Optional[List[Label]]
    people: VerdictPair
    reason: str
    run_id: str
    scorer: VerdictPair


class Error(TypedDict):
    """Error, as the service's OpenAPI document describes it."""
    code: str
    message: str


class ErrorDetail(TypedDict):
    """ErrorDetail, as the service's OpenAPI document describes it."""
    #: Where the error occurred, e.g. 'body.items[3].tags' or 'path.thing-id'
    location: NotRequired[str]
    #: Error message text
    message: NotRequired[str]
    #: The value at the given location
    value: NotRequired[Any]


class Estimate(TypedDict):
    """Estimate, as the service's OpenAPI document describes it."""
    high: float
    low: float
    method: str
    n: int
    undefined: NotRequired[str]
    value: float


class EvaluationView(TypedDict):
    """EvaluationView, as the service's OpenAPI document describes it."""
    agent: str
    created_at: str
    disagreements: NotRequired[Optional[List[VersionDisagreement]]]
    done_results: int
    expected_results: int
    id: str
    judge_estimate: NotRequired[JudgeEstimate]
    limit: NotRequired[int]
    #: An arrival evaluation still taking the agent's arriving runs: runs and expected_results
    #: grow as they arrive (done means every result so far is stored). It closes when it holds
    #: the most runs or grows old; later runs open the next.
    open: NotRequired[bool]
    results: NotRequired[Optional[List[ResultView]]]
    runs: int
    scorers: Optional[List[ScorerSummary]]
    since: NotRequired[str]
    #: dry_run: an evaluation asked with dry_run, not created.
    status: Literal["running", "done", "dry_run"]
    tiered: bool
    trigger: Literal["request", "arrival"]


class Evidence(TypedDict):
    """Evidence, as the service's OpenAPI document describes it."""
    capped: NotRequired[str]
    causes: NotRequired[Optional[List[Cause]]]
    flags: NotRequired[Dict[str, int]]
    held: NotRequired[bool]
    measured: Measure
    previous: NotRequired[Counts]
    scorer_version: str
    window: Counts
    worst: NotRequired[Optional[List[Example]]]


class Example(TypedDict):
    """Example, as the service's OpenAPI document describes it."""
    error_code: NotRequired[str]
    error_message: NotRequired[str]
    flags: NotRequired[Optional[List[str]]]
    passed: NotRequired[bool]
    reason: NotRequired[str]
    run_id: str
    run_time: str
    score: NotRequired[float]
    status: str


class GateOverride(TypedDict):
    """GateOverride, as the service's OpenAPI document describes it."""
    at: str
    #: Who overrode: the key's id.
    by: str
    #: Why the refused promotion went through, as the request gave it.
    reason: str


class GateReport(TypedDict):
    """GateReport, as the service's OpenAPI document describes it."""
    candidate: Estimate
    current: Estimate
    decision: str
    difference: Estimate
    metric: str
    reason: str
    resamples: int
    runs: int
    seed: int


class ImportResult(TypedDict):
    """ImportResult, as the service's OpenAPI document describes it."""
    content_differs: int
    deleted: int
    duplicates: int
    evaluations: NotRequired[Optional[List[str]]]
    redacted: int
    rejected: int
    repaired: int
    runs: Optional[List[ImportedRun]]
    stored: int
    warnings: NotRequired[Optional[List[str]]]


class ImportedLabel(TypedDict):
    """ImportedLabel, as the service's OpenAPI document describes it."""
    error: NotRequired[str]
    line: int
    run_id: NotRequired[str]
    scorer: NotRequired[str]
    status: Literal["stored", "replaced", "rejected"]


class ImportedRun(TypedDict):
    """ImportedRun, as the service's OpenAPI document describes it."""
    content_differs: NotRequired[bool]
    error: NotRequired[str]
    id: NotRequired[str]
    line: int
    redactions: NotRequired[Dict[str, int]]
    repaired: NotRequired[bool]
    status: Literal["stored", "duplicate", "rejected", "deleted"]
    warning: NotRequired[str]


class Info(TypedDict):
    """Info, as the service's OpenAPI document describes it."""
    abi_version: int
    capabilities: NotRequired[Optional[List[str]]]
    config_schema: NotRequired[Any]
    decimals: NotRequired[int]
    defaults: NotRequired[Any]
    description: str
    dimensions: NotRequired[Optional[List[Dimension]]]
    name: str
    range: Range
    range_config: NotRequired[str]
    threshold: float
    version: str


class IngestDrop(TypedDict):
    """IngestDrop, as the service's OpenAPI document describes it."""
    log_records: int
    #: late, over_cap, window_ended, no_run, no_ids
    reason: str
    spans: int
    trace_ids: Optional[List[str]]


class IngestView(TypedDict):
    """IngestView, as the service's OpenAPI document describes it."""
    dropped: Optional[List[IngestDrop]]
    ignored: Dict[str, int]
    log_records: int
    runs: int
    spans: int
    waiting_log_records: int
    waiting_spans: int


class Insight(TypedDict):
    """Insight, as the service's OpenAPI document describes it."""
    agent: str
    evidence: Evidence
    id: str
    kind: Literal["evaluation_health", "gross_failures", "quality", "regression"]
    opened_at: str
    resolved_at: NotRequired[str]
    scorer: str
    severity: Literal["warning", "critical"]
    title: str
    updated_at: str


class InsightsPage(TypedDict):
    """InsightsPage, as the service's OpenAPI document describes it."""
    insights: Optional[List[Insight]]
    next: NotRequired[str]


class JudgeEndpoint(TypedDict):
    """JudgeEndpoint, as the service's OpenAPI document describes it."""
    embeddings: NotRequired[bool]
    key: JudgeKeyState
    model: str
    models: Optional[List[str]]
    name: str
    tenant_key_required: bool


class JudgeEstimate(TypedDict):
    """JudgeEstimate, as the service's OpenAPI document describes it."""
    #: How the figures were reached, per scorer.
    basis: str
    budget_window: NotRequired[str]
    #: Judge calls expected (cache hits included).
    judge_calls: float
    token_budget: int
    #: Prompt and completion tokens expected; 0 where no earlier result measured them.
    tokens: float


class JudgeKeyInputBody(TypedDict):
    """JudgeKeyInputBody, as the service's OpenAPI document describes it."""
    #: The API key. It is never returned.
    key: str


class JudgeKeyState(TypedDict):
    """JudgeKeyState, as the service's OpenAPI document describes it."""
    problem: NotRequired[str]
    stored: bool
    updated_at: NotRequired[str]


class JudgeRoute(TypedDict):
    """JudgeRoute, as the service's OpenAPI document describes it."""
    #: An endpoint the operator allows, by name. Default is "default", the operator's main
    #: judge.
    endpoint: NotRequired[str]
    #: A model the endpoint allows. Default is the endpoint's model.
    model: NotRequired[str]


class Label(TypedDict):
    """Label, as the service's OpenAPI document describes it."""
    agent: str
    #: One of a rubric's choices, as the rubric names it.
    choice: NotRequired[str]
    created_at: str
    #: Who labelled the run; a person labelling again replaces their label.
    labeller: str
    #: Why, in the labeller's words.
    note: NotRequired[str]
    #: Pass (true) or fail (false).
    passed: NotRequired[bool]
    run_id: str
    #: A score in [0, 1]; with choice, the score the rubric gives that choice.
    score: NotRequired[float]
    #: The scorer, or the criterion several scorers share, the label judges the run for.
    scorer: str
    updated_at: str


class LabelImportResult(TypedDict):
    """LabelImportResult, as the service's OpenAPI document describes it."""
    lines: Optional[List[ImportedLabel]]
    rejected: int
    replaced: int
    stored: int


class LabelInput(TypedDict):
    """LabelInput, as the service's OpenAPI document describes it."""
    #: One of a rubric's choices, as the rubric names it.
    choice: NotRequired[str]
    #: Who labelled the run; a person labelling again replaces their label.
    labeller: str
    #: Why, in the labeller's words.
    note: NotRequired[str]
    #: Pass (true) or fail (false).
    passed: NotRequired[bool]
    #: A score in [0, 1]; with choice, the score the rubric gives that choice.
    score: NotRequired[float]


class LabelsPage(TypedDict):
    """LabelsPage, as the service's OpenAPI document describes it."""
    labels: Optional[List[Label]]
    next: NotRequired[str]


class Limits(TypedDict):
    """Limits, as the service's OpenAPI document describes it."""
    cpu_seconds: NotRequired[int]
    max_calls: NotRequired[int]
    max_output_bytes: NotRequired[int]
    max_result_bytes: NotRequired[int]
    memory_mib: NotRequired[int]
    pool_size: NotRequired[int]
    stack_kib: NotRequired[int]
    timeout_ms: NotRequired[int]


class Manifest(TypedDict):
    """Manifest, as the service's OpenAPI document describes it."""
    limits: NotRequired[Limits]
    scorer: NotRequired[str]


class Measure(TypedDict):
    """Measure, as the service's OpenAPI document describes it."""
    confidence: float
    high: float
    k: int
    level: float
    low: float
    n: int
    value: float
    what: str


class NotScored(TypedDict):
    """NotScored, as the service's OpenAPI document describes it."""
    basis: str
    failed: int
    judge_calls: float
    needs_judge: bool
    no_result: int
    other_version: int
    runs: int
    skipped: int
    tokens: float


class PairBool(TypedDict):
    """PairBool, as the service's OpenAPI document describes it."""
    got: bool
    run_id: str
    want: bool


class PairFloat64(TypedDict):
    """PairFloat64, as the service's OpenAPI document describes it."""
    got: float
    run_id: str
    want: float


class PassFailReport(TypedDict):
    """PassFailReport, as the service's OpenAPI document describes it."""
    accuracy: Estimate
    confusion: Confusion
    disagreements: Optional[List[PairBool]]
    fail_precision: Estimate
    fail_recall: Estimate
    kappa: Estimate
    runs: int


class PeopleAgreement(TypedDict):
    """PeopleAgreement, as the service's OpenAPI document describes it."""
    a: str
    b: str
    pass_fail: NotRequired[PassFailReport]
    scores: NotRequired[ScoreReport]


class PolicyBody(TypedDict):
    """PolicyBody, as the service's OpenAPI document describes it."""
    #: Per-scorer config.
    config: NotRequired[Dict[str, Dict[str, Any]]]
    #: The judge the agent's runs are scored with, in every evaluation of the agent: an
    #: endpoint the operator allows and a model there (GET /v1/judge/endpoints lists them).
    #: Default is the operator's default endpoint and model.
    judge: NotRequired[JudgeRoute]
    #: Share of arriving runs evaluated; which runs depends only on the run id.
    sample_rate: float
    #: Scorers run on arriving runs.
    scorers: Optional[List[str]]
    #: Run the scorers that need a judge only on runs the pre-screen passed.
    tiered: NotRequired[bool]
    updated_at: NotRequired[str]
    #: How many of the agent's latest runs its insights look at. Default 100.
    window: NotRequired[int]


class PreviousResult(TypedDict):
    """PreviousResult, as the service's OpenAPI document describes it."""
    created_at: str
    evaluation_id: str
    passed: Optional[bool]
    score: Optional[float]
    scorer_version: str
    status: str


class PreviousSummary(TypedDict):
    """PreviousSummary, as the service's OpenAPI document describes it."""
    mean: Optional[float]
    pass_rate: Optional[float]
    runs: int
    scored: int
    versions: Optional[List[str]]


class Problem(TypedDict):
    """Problem, as the service's OpenAPI document describes it."""
    code: str
    detail: NotRequired[str]
    errors: NotRequired[Optional[List[ErrorDetail]]]
    status: int
    title: str


class PromoteInputBody(TypedDict):
    """PromoteInputBody, as the service's OpenAPI document describes it."""
    #: Why a promotion the agreement gate refuses goes through anyway; recorded with the
    #: promotion, with who and when.
    override: NotRequired[str]


class PromotionGate(TypedDict):
    """PromotionGate, as the service's OpenAPI document describes it."""
    candidate: str
    current: NotRequired[str]
    override: NotRequired[GateOverride]
    report: GateReport


class PromotionRecord(TypedDict):
    """PromotionRecord, as the service's OpenAPI document describes it."""
    #: What the agreement gate said, when the tenant requires it.
    gate: NotRequired[PromotionGate]
    promoted_at: str


class PublishInputBody(TypedDict):
    """PublishInputBody, as the service's OpenAPI document describes it."""
    #: A configured scorer: the service's scorer it configures.
    base: NotRequired[str]
    #: The config pinned in the version: of base, or given to the module.
    config: NotRequired[Dict[str, Any]]
    #: A WASM scorer: the scorer of the module to publish (when it carries several) and the
    #: limits it runs under.
    manifest: NotRequired[Manifest]
    #: A WASM scorer: the module, base64.
    module: NotRequired[str]
    #: The scorer's name in the tenant's namespace: 1 to 64 lower case letters, digits, '_' or
    #: '-', starting with a letter.
    name: str
    #: Replace the service's scorer of the same name, for this tenant only, once a version is
    #: promoted.
    replaces: NotRequired[bool]


class PublishedVersion(TypedDict):
    """PublishedVersion, as the service's OpenAPI document describes it."""
    #: The scorer a configured scorer configures.
    base: NotRequired[str]
    config: NotRequired[Any]
    created_at: str
    deleted: bool
    #: The module's sha256 (wasm) or the hash of base and config (configured).
    digest: str
    #: The agreement gate's report on this promotion, when the tenant requires the gate.
    gate: NotRequired[PromotionGate]
    info: NotRequired[Info]
    #: The judge model the version pins.
    judge_model: NotRequired[str]
    kind: Literal["configured", "wasm"]
    manifest: NotRequired[Manifest]
    name: str
    #: The plain name follows this version.
    promoted: bool
    #: The version's promotions, newest first, with the agreement gate's report and any
    #: override.
    promotions: NotRequired[Optional[List[PromotionRecord]]]
    #: name@version: how an evaluation or a policy names this version.
    ref: str
    replaces: bool
    version: int


class Range(TypedDict):
    """Range, as the service's OpenAPI document describes it."""
    max: float
    min: float


class Result(TypedDict):
    """Result, as the service's OpenAPI document describes it."""
    adjustments: NotRequired[Optional[List[Adjustment]]]
    citation_audit: NotRequired[CitationAudit]
    dimensions: NotRequired[Dict[str, float]]
    error: NotRequired[Error]
    flags: NotRequired[Optional[List[str]]]
    passed: NotRequired[bool]
    reason: NotRequired[str]
    score: NotRequired[float]
    skipped_dimensions: NotRequired[Dict[str, str]]
    status: str
    steps: NotRequired[Optional[List[Step]]]
    suggestions: NotRequired[Optional[List[str]]]
    telemetry: Telemetry


class ResultView(TypedDict):
    """ResultView, as the service's OpenAPI document describes it."""
    #: What the host changed in the scorer's numbers and why (normalization, citation clamps,
    #: the weighted overall).
    adjustments: NotRequired[Optional[List[Adjustment]]]
    created_at: str
    #: Set when the stored result cannot be decoded: status, score and passed hold (they are
    #: stored apart), reason, dimensions, flags, error, adjustments and steps are lost.
    decode_error: NotRequired[str]
    dimensions: NotRequired[Dict[str, float]]
    error: NotRequired[Error]
    evaluation_id: str
    flags: NotRequired[Optional[List[str]]]
    judge_model: NotRequired[str]
    passed: Optional[bool]
    previous: NotRequired[PreviousResult]
    reason: NotRequired[str]
    run_id: str
    score: Optional[float]
    scorer: str
    #: A published scorer's module digest or config hash.
    scorer_digest: NotRequired[str]
    scorer_version: str
    status: Literal["scored", "skipped", "failed"]
    steps: NotRequired[Optional[List[Step]]]


class Run(TypedDict):
    """Run is one thing an agent did: the unit a scorer grades."""
    #: Agent names the agent that produced the run. Optional.
    agent: NotRequired[str]
    #: CitationAudit is a citation audit computed upstream. Optional; when absent the host
    #: computes one for scorers with a grounding dimension (faithfulness,
    #: hallucination_free).
    citation_audit: NotRequired[RunCitationAudit]
    #: Context is the evidence the agent retrieved, in retrieval order.
    context: NotRequired[List[Union[str, RunContextItem]]]
    #: Conversation is every turn the agent was given, in order, when the input was a
    #: conversation: system instructions, earlier user and assistant turns, tool results.
    #: Optional.
    conversation: NotRequired[List[RunTurn]]
    #: Expected is a reference answer. Optional.
    expected: NotRequired[str]
    #: ExpectedToolCalls are the tool calls the agent should make for this input, in the
    #: order it should make them, for scorers that grade tool use (tool_calls): each names
    #: a tool and may say what its arguments must be. Optional.
    expected_tool_calls: NotRequired[List[RunExpectedToolCall]]
    #: ID identifies the run in results. Optional; the CLI uses the line number when empty.
    #: In JSON a string or a number (kept as written: 42 is "42").
    id: NotRequired[Union[str, float]]
    #: Input is what the agent was asked or given (a question, an email, a task). In JSON a
    #: string, or a conversation: an array of chat messages in OpenAI's shape, of which
    #: Input is the text of the last user turn and Conversation keeps every turn.
    input: NotRequired[Union[str, List[RunTurn]]]
    #: Metadata is free-form. A judge reads metadata.purpose or metadata.instructions to learn
    #: what the agent is for (a Slack triage is the right answer to a raw email).
    #:
    #: How the run ended, when the caller recorded it, is definitive for the pre-screen
    #: (absent keys and unknown values change nothing; values are read case-insensitively,
    #: "-" as "_"):
    #:   - the model's stop reason, under finish_reason (OpenAI and compatible servers),
    #:     stop_reason (Anthropic), finishReason (Gemini, Vercel AI SDK) or stopReason
    #:     (Bedrock): length, max_tokens, max_output_tokens mean the output was cut off at
    #:     the token limit; content_filter, refusal, safety, prohibited_content, blocklist,
    #:     spii, guardrail_intervened mean the provider refused or filtered the answer; error
    #:     means the call failed;
    #:   - error: any non-empty value (a message, an error object) means the framework
    #:     recorded a failure;
    #:   - status: error, failed, failure, timeout, timed_out, crashed mean the same.
    metadata: NotRequired[Dict[str, Any]]
    #: Output is what the agent answered. Required in datasets; it may be empty, which the
    #: pre-screen flags. In JSON a string, or the agent's turns: one assistant message or an
    #: array of assistant and tool messages, of which Output is the assistant's text (turns
    #: joined by a blank line) and ToolCalls the calls it made.
    output: Union[str, RunTurn, List[RunTurn]]
    #: Time is when the agent produced the run, in RFC 3339. Optional. The service orders an
    #: agent's runs by it ("the last 10 runs") and uses the time it received the run when
    #: it is absent; scorers need not read it.
    time: NotRequired[str]
    #: ToolCalls are the tools the agent called while producing the output, in order, with
    #: their results where the run records them. Optional.
    tool_calls: NotRequired[List[RunToolCall]]


class RunContextItem(TypedDict):
    """RunContextItem, as the service's OpenAPI document describes it."""
    #: What citations in the output refer to ("1", "doc-3"). Optional; defaults to the
    #: passage's 1-based position.
    id: NotRequired[Union[str, float]]
    #: The passage itself.
    text: str


class RunCitationAudit(TypedDict):
    """CitationAudit records what a deterministic check of the output's citations found."""
    #: Citations counts citation markers found in the output.
    citations: NotRequired[int]
    #: HallucinationDetected is true when a citation is invalid or provably unsupported.
    hallucination_detected: NotRequired[bool]
    #: InvalidCitations lists cited ids that match no context passage.
    invalid_citations: NotRequired[List[str]]
    #: Sentences counts the output's sentences that state something (claims).
    sentences: NotRequired[int]
    #: UncitedSentences counts claims with no citation.
    uncited_sentences: NotRequired[int]
    #: UnsupportedCitations lists citations whose passage cannot support the sentence that
    #: cites it, as "id: reason".
    unsupported_citations: NotRequired[List[str]]


class RunExpectedToolCall(TypedDict):
    """ExpectedToolCall is a tool call a run should contain."""
    #: Arguments the call must have: a JSON object each of whose fields the call's
    #: arguments must hold with an equal value (fields it does not name may hold anything).
    #: Optional. In JSON an object, or a string holding one (kept as its JSON text).
    arguments: NotRequired[Union[Dict[str, Any], str]]
    #: ArgumentsSchema is a JSON Schema the call's arguments must satisfy. Optional. In
    #: JSON an object, or a string holding one (kept as its JSON text).
    arguments_schema: NotRequired[Union[Dict[str, Any], str]]
    #: Name of the tool.
    name: str


class RunSummary(TypedDict):
    """RunSummary, as the service's OpenAPI document describes it."""
    agent: str
    id: str
    received_at: str
    repaired: NotRequired[bool]
    run: Any
    time: str


class RunToolCall(TypedDict):
    """ToolCall is one call of a tool (a function) by the agent."""
    #: Arguments as the model wrote them, usually a JSON object as text. In JSON a string or
    #: any value (kept as its JSON text).
    arguments: NotRequired[Any]
    #: OpenAI's shape of a call: {"type": "function", "function": {"name", "arguments"}}.
    function: NotRequired[RunToolCallFunction]
    #: ID pairs the call with its result. Optional.
    id: NotRequired[Union[str, float]]
    #: Name of the tool.
    name: NotRequired[str]
    #: Result is what the tool returned, when the run records it. In JSON a string or any
    #: value (kept as its JSON text).
    result: NotRequired[Any]


class RunToolCallFunction(TypedDict):
    """OpenAI's shape of a call: {"type": "function", "function": {"name", "arguments"}}."""
    #: Any JSON value; a string as the model wrote it.
    arguments: NotRequired[Any]
    name: NotRequired[str]


class RunTurn(TypedDict):
    """Turn is one message of a conversation, in the shape of OpenAI's chat messages."""
    #: Content is the message's text. In JSON a string, null, or an array of content parts
    #: of which the text parts ({"type": "text", "text": ...}, and refusals) are kept, joined
    #: by a newline; images, audio and files are not carried.
    content: NotRequired[Union[str, None, List[Dict[str, Any]]]]
    #: Name of the participant or tool. Optional.
    name: NotRequired[str]
    #: Role is who speaks: system, developer, user, assistant or tool.
    role: NotRequired[str]
    #: ToolCallID is the call a tool turn answers. Optional.
    tool_call_id: NotRequired[Union[str, float]]
    #: ToolCalls an assistant turn made. Optional.
    tool_calls: NotRequired[List[RunToolCall]]


class RunView(TypedDict):
    """RunView, as the service's OpenAPI document describes it."""
    agent: str
    id: str
    received_at: str
    redacted: NotRequired[bool]
    redactions: NotRequired[Dict[str, int]]
    repaired: NotRequired[bool]
    results: Optional[List[ResultView]]
    run: Any
    time: str


class RunsPage(TypedDict):
    """RunsPage, as the service's OpenAPI document describes it."""
    next: NotRequired[str]
    runs: Optional[List[RunSummary]]


class ScoreInputBody(TypedDict):
    """ScoreInputBody, as the service's OpenAPI document describes it."""
    #: The scorer's config for this call; it replaces the defaults field by field. The scorer
    #: is opened once per (tenant, scorer, config) and reused.
    config: NotRequired[Dict[str, Any]]
    #: Where the scorer's judge calls go: an endpoint the operator allows and a model there
    #: (GET /v1/judge/endpoints lists them). Default is the operator's default endpoint and
    #: model.
    judge: NotRequired[JudgeRoute]
    #: The run to score.
    run: Run
    #: The scorer; GET /v1/scorers lists them.
    scorer: str
    #: Include the pipeline steps (judge prompts and parsed answers), which are large.
    steps: NotRequired[bool]


class ScoreLabelledResult(TypedDict):
    """ScoreLabelledResult, as the service's OpenAPI document describes it."""
    evaluations: Optional[List[str]]
    runs: int
    scorer: str
    version: str


class ScoreReport(TypedDict):
    """ScoreReport, as the service's OpenAPI document describes it."""
    disagreements: Optional[List[PairFloat64]]
    kendall: Estimate
    mae: Estimate
    runs: int
    spearman: Estimate
    tolerance: float


class ScorerAgreement(TypedDict):
    """ScorerAgreement, as the service's OpenAPI document describes it."""
    criterion: str
    disagreements: Optional[List[Disagreement]]
    labelled_runs: int
    labeller: NotRequired[str]
    labellers: Optional[List[str]]
    labels: int
    not_scored: NotScored
    notes: NotRequired[Optional[List[str]]]
    pass_fail: NotRequired[PassFailReport]
    people: Optional[List[PeopleAgreement]]
    scorer: str
    scores: NotRequired[ScoreReport]
    version: str
    versions: Optional[List[str]]


class ScorerInfo(TypedDict):
    """ScorerInfo, as the service's OpenAPI document describes it."""
    abi_version: int
    capabilities: NotRequired[Optional[List[str]]]
    config_schema: NotRequired[Any]
    decimals: NotRequired[int]
    defaults: NotRequired[Any]
    description: str
    dimensions: NotRequired[Optional[List[Dimension]]]
    name: str
    promoted: NotRequired[int]
    range: Range
    range_config: NotRequired[str]
    runtime: str
    source: Literal["host", "tenant"]
    threshold: float
    version: str
    versions: NotRequired[Optional[List[PublishedVersion]]]


class ScorerSummary(TypedDict):
    """ScorerSummary, as the service's OpenAPI document describes it."""
    failed: int
    mean: Optional[float]
    name: str
    pass_rate: Optional[float]
    pending: int
    previous: NotRequired[PreviousSummary]
    scored: int
    skipped: int
    version: str


class Step(TypedDict):
    """Step, as the service's OpenAPI document describes it."""
    name: str
    output: NotRequired[Any]
    prompt: NotRequired[str]


class Telemetry(TypedDict):
    """Telemetry, as the service's OpenAPI document describes it."""
    cache_hits: NotRequired[int]
    completion_tokens: NotRequired[int]
    duration_ms: float
    judge_calls: NotRequired[int]
    judge_limits: NotRequired[Optional[List[str]]]
    nodes: NotRequired[Optional[List[Dict[str, Any]]]]
    prompt_tokens: NotRequired[int]
    replaced: NotRequired[str]
    retries: NotRequired[int]
    runtime: NotRequired[str]


class VerdictPair(TypedDict):
    """VerdictPair, as the service's OpenAPI document describes it."""
    passed: NotRequired[bool]
    score: NotRequired[float]


class VersionDisagreement(TypedDict):
    """VersionDisagreement, as the service's OpenAPI document describes it."""
    run_id: str
    #: The scorer's plain name.
    scorer: str
    verdicts: Optional[List[VersionVerdict]]


class VersionVerdict(TypedDict):
    """VersionVerdict, as the service's OpenAPI document describes it."""
    passed: Optional[bool]
    reason: NotRequired[str]
    score: Optional[float]
    #: The name the results are under: the plain name for the promoted version, name@N for
    #: another.
    scorer: str
    status: str
    version: str


class ListAgentsQuery(TypedDict, total=False):
    """The query of GET /v1/agents (list-agents)."""
    #: Items per page.
    limit: int
    #: The next value of the previous page.
    cursor: str


class ListEvaluationsQuery(TypedDict, total=False):
    """The query of GET /v1/agents/{agent}/evaluations (list-evaluations)."""
    limit: int


class ListAgentInsightsQuery(TypedDict, total=False):
    """The query of GET /v1/agents/{agent}/insights (list-agent-insights)."""
    #: Wait up to this long (e.g. 30s) for the agent's insights being updated after new results
    #: (or new settings) to be up to date.
    wait: str
    #: Keep one severity.
    severity: Literal["warning", "critical"]
    #: Open insights (the default), resolved ones, or all.
    state: Literal["open", "resolved", "all"]
    #: Insights per page.
    limit: int
    #: The next value of the previous page.
    cursor: str


class ListRunsQuery(TypedDict, total=False):
    """The query of GET /v1/agents/{agent}/runs (list-runs)."""
    #: Runs per page.
    limit: int
    #: The next value of the previous page.
    cursor: str


class AuditLogQuery(TypedDict, total=False):
    """The query of GET /v1/audit (audit-log)."""
    #: List entries older than this id (the last id of the previous page).
    before: int
    #: Entries per page.
    limit: int


class GetEvaluationQuery(TypedDict, total=False):
    """The query of GET /v1/evaluations/{id} (get-evaluation)."""
    #: Wait up to this long (e.g. 30s) for the evaluation to be done.
    wait: str
    #: Include the results.
    results: bool
    #: Include each result's pipeline steps (judge prompts; large).
    steps: bool


class ListInsightsQuery(TypedDict, total=False):
    """The query of GET /v1/insights (list-insights)."""
    #: Wait up to this long (e.g. 30s) for the insights being updated after new results (or new
    #: settings) to be up to date.
    wait: str
    #: Keep one severity.
    severity: Literal["warning", "critical"]
    #: Open insights (the default), resolved ones, or all.
    state: Literal["open", "resolved", "all"]
    #: Insights per page.
    limit: int
    #: The next value of the previous page.
    cursor: str


class ListLabelsQuery(TypedDict, total=False):
    """The query of GET /v1/labels (list-labels)."""
    #: Keep one scorer's (or criterion's) labels.
    scorer: str
    #: Keep one labeller's labels.
    labeller: str
    #: Labels per page.
    limit: int
    #: The next value of the previous page.
    cursor: str


class ImportRunsQuery(TypedDict, total=False):
    """The query of POST /v1/runs (import-runs)."""
    #: Agent of the runs that name none; a run naming another agent is rejected.
    agent: str


class GetRunQuery(TypedDict, total=False):
    """The query of GET /v1/runs/{id} (get-run)."""
    #: Include each result's pipeline steps (judge prompts; large).
    steps: bool


class ListRunLabelsQuery(TypedDict, total=False):
    """The query of GET /v1/runs/{id}/labels (list-run-labels)."""
    #: Keep one scorer's (or criterion's) labels.
    scorer: str


class DeleteLabelQuery(TypedDict, total=False):
    """The query of DELETE /v1/runs/{id}/labels/{scorer} (delete-label)."""
    #: Whose label to remove.
    labeller: str


class GetAgreementQuery(TypedDict, total=False):
    """The query of GET /v1/scorers/{scorer}/agreement (get-agreement)."""
    #: The scorer version. Default: the version most recently used on the labelled runs.
    version: str
    #: Compare with the labels of this criterion (one several scorers share). Default: the
    #: scorer's own labels.
    criterion: str
    #: Take one person's labels as the reference. Default: every labeller's, combined.
    labeller: str
    #: The score difference above which a run is a disagreement. Default 0.3.
    tolerance: float


class ScoreLabelledQuery(TypedDict, total=False):
    """The query of POST /v1/scorers/{scorer}/agreement/score (score-labelled)."""
    #: The labels whose runs to score. Default: the scorer's own.
    criterion: str


#: Every operation of the API by operationId: its method and path.
OPERATIONS: Dict[str, Tuple[str, str]] = {
    "healthz": ("GET", "/healthz"),
    "list-agents": ("GET", "/v1/agents"),
    "delete-agent": ("DELETE", "/v1/agents/{agent}"),
    "list-evaluations": ("GET", "/v1/agents/{agent}/evaluations"),
    "create-evaluation": ("POST", "/v1/agents/{agent}/evaluations"),
    "list-agent-insights": ("GET", "/v1/agents/{agent}/insights"),
    "delete-agent-policy": ("DELETE", "/v1/agents/{agent}/policy"),
    "get-agent-policy": ("GET", "/v1/agents/{agent}/policy"),
    "put-agent-policy": ("PUT", "/v1/agents/{agent}/policy"),
    "list-runs": ("GET", "/v1/agents/{agent}/runs"),
    "audit-log": ("GET", "/v1/audit"),
    "get-evaluation": ("GET", "/v1/evaluations/{id}"),
    "export": ("GET", "/v1/export"),
    "get-ingest": ("GET", "/v1/ingest"),
    "list-insights": ("GET", "/v1/insights"),
    "get-insight": ("GET", "/v1/insights/{id}"),
    "list-judge-endpoints": ("GET", "/v1/judge/endpoints"),
    "delete-judge-key": ("DELETE", "/v1/judge/endpoints/{endpoint}/key"),
    "put-judge-key": ("PUT", "/v1/judge/endpoints/{endpoint}/key"),
    "list-labels": ("GET", "/v1/labels"),
    "import-labels": ("POST", "/v1/labels"),
    "export-logs": ("POST", "/v1/logs"),
    "import-runs": ("POST", "/v1/runs"),
    "delete-run": ("DELETE", "/v1/runs/{id}"),
    "get-run": ("GET", "/v1/runs/{id}"),
    "list-run-labels": ("GET", "/v1/runs/{id}/labels"),
    "delete-label": ("DELETE", "/v1/runs/{id}/labels/{scorer}"),
    "put-label": ("PUT", "/v1/runs/{id}/labels/{scorer}"),
    "score": ("POST", "/v1/score"),
    "list-scorers": ("GET", "/v1/scorers"),
    "publish-scorer": ("POST", "/v1/scorers"),
    "list-scorer-versions": ("GET", "/v1/scorers/{name}/versions"),
    "delete-scorer-version": ("DELETE", "/v1/scorers/{name}/versions/{version}"),
    "get-scorer-version": ("GET", "/v1/scorers/{name}/versions/{version}"),
    "promote-scorer-version": ("POST", "/v1/scorers/{name}/versions/{version}/promote"),
    "get-agreement": ("GET", "/v1/scorers/{scorer}/agreement"),
    "score-labelled": ("POST", "/v1/scorers/{scorer}/agreement/score"),
    "delete-tenant": ("DELETE", "/v1/tenant"),
    "export-traces": ("POST", "/v1/traces"),
}
