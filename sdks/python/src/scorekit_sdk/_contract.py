"""The contract between scorekit's host and a scorer, in Python: what sdk/ is for Go.

The host and every runtime speak JSON (the schemas under schemas/ in the repository); these
classes read and write that JSON. A scorer returns a Result with a status that separates
"scored" from "skipped" and "failed"; the host validates it, maps its native range to 0-1,
recomputes a weighted overall score, rounds it and decides "passed".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

#: The version of the contract this SDK speaks (sdk.ABIVersion). The host refuses a scorer
#: whose Info declares another major version.
ABI_VERSION = 1

# Statuses.
SCORED = "scored"
SKIPPED = "skipped"
FAILED = "failed"

# Error codes (sdk.Code*). They cross the plugin boundary as strings.
INVALID_RUN = "invalid_run"
INVALID_CONFIG = "invalid_config"
INVALID_RESULT = "invalid_result"
TIMEOUT = "timeout"
CANCELED = "canceled"
SCORER_ERROR = "scorer_error"
JUDGE_ERROR = "judge_error"
LIMIT_EXCEEDED = "limit_exceeded"
TRAP = "trap"
UNAVAILABLE = "unavailable"

CODES = (
    INVALID_RUN, INVALID_CONFIG, INVALID_RESULT, TIMEOUT, CANCELED,
    SCORER_ERROR, JUDGE_ERROR, LIMIT_EXCEEDED, TRAP, UNAVAILABLE,
)

# Capabilities a scorer may declare.
CAP_JUDGE = "judge"
CAP_EMBED = "embed"


class ScorerError(Exception):
    """An error with one of the contract's codes: raised by a scorer (or by the judge), it
    becomes a failed result with that code and message, never a score of 0. Any other
    exception a scorer raises is failed with code scorer_error."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Range:
    """A closed interval of scores: a scorer's native range (0-1, 1-5, 0-100 ...)."""

    min: float = 0.0
    max: float = 1.0

    def to_json(self) -> Dict[str, float]:
        return {"min": self.min, "max": self.max}


#: The range every score has after the host: 0 to 1.
UNIT = Range(0.0, 1.0)


@dataclass(frozen=True)
class Dimension:
    """A named sub-score and its weight in the overall score."""

    name: str
    weight: float
    description: str = ""

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"name": self.name, "weight": self.weight}
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class Info:
    """What a scorer measures, on which scale, and what it needs (sdk.Info).

    name is how users select it (lower case, digits, '_' and '-'); range is the native range
    of its scores; threshold is the normalized score (0-1) at or above which a run passes;
    config_schema is the JSON Schema of its config (without one it accepts only an empty
    config) and defaults the config used for fields the caller leaves out; capabilities
    lists what it needs from the host ("judge", "embed")."""

    name: str
    version: str
    description: str
    threshold: float
    range: Range = UNIT
    abi_version: int = ABI_VERSION
    range_config: str = ""
    dimensions: Sequence[Dimension] = ()
    decimals: int = 0
    config_schema: Optional[Mapping[str, Any]] = None
    defaults: Optional[Mapping[str, Any]] = None
    capabilities: Sequence[str] = ()

    def has(self, capability: str) -> bool:
        return capability in self.capabilities

    def to_json(self) -> Dict[str, Any]:
        """The Info as the host reads it (info.schema.json)."""
        out: Dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "abi_version": self.abi_version,
            "description": self.description,
            "range": self.range.to_json(),
            "threshold": self.threshold,
        }
        if self.range_config:
            out["range_config"] = self.range_config
        if self.dimensions:
            out["dimensions"] = [d.to_json() for d in self.dimensions]
        if self.decimals:
            out["decimals"] = self.decimals
        if self.config_schema is not None:
            out["config_schema"] = dict(self.config_schema)
        if self.defaults is not None:
            out["defaults"] = dict(self.defaults)
        if self.capabilities:
            out["capabilities"] = list(self.capabilities)
        return out


# --- runs -------------------------------------------------------------------------------


@dataclass
class ToolCall:
    """One call of a tool by the agent: arguments and result as text (JSON as written)."""

    name: str
    id: str = ""
    arguments: str = ""
    result: str = ""


@dataclass
class Turn:
    """One message of a conversation, in the shape of OpenAI's chat messages."""

    role: str
    content: str = ""
    name: str = ""
    tool_calls: List[ToolCall] = field(default_factory=list)
    tool_call_id: str = ""


@dataclass
class Passage:
    """One piece of retrieved evidence; id is what citations in the output refer to."""

    id: str
    text: str


@dataclass
class ExpectedToolCall:
    """A tool call a run should contain."""

    name: str
    arguments: str = ""
    arguments_schema: str = ""


@dataclass
class Run:
    """One thing an agent did: what a scorer grades (sdk.Run), in its normalized view.

    input is the question (for a conversation, its last user turn) and conversation every
    turn the agent was given; output is what the agent said and tool_calls what it did;
    context the evidence it retrieved (each passage numbered when it had no id); expected a
    reference answer. raw is the run's JSON object as the host sent it."""

    output: str
    input: str = ""
    id: str = ""
    agent: str = ""
    conversation: List[Turn] = field(default_factory=list)
    tool_calls: List[ToolCall] = field(default_factory=list)
    context: List[Passage] = field(default_factory=list)
    expected: str = ""
    expected_tool_calls: List[ExpectedToolCall] = field(default_factory=list)
    citation_audit: Optional[Dict[str, Any]] = None
    time: Optional[str] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "Run":
        """Reads a run as the host sends it (normalized: input and output are text)."""

        def calls(items: Any) -> List[ToolCall]:
            return [ToolCall(name=c.get("name", ""), id=c.get("id", ""), arguments=c.get("arguments", ""),
                             result=c.get("result", "")) for c in items or []]

        return cls(
            output=doc.get("output", "") or "",
            input=doc.get("input", "") or "",
            id=doc.get("id", "") or "",
            agent=doc.get("agent", "") or "",
            conversation=[Turn(role=t.get("role", ""), content=t.get("content", "") or "", name=t.get("name", ""),
                               tool_calls=calls(t.get("tool_calls")), tool_call_id=t.get("tool_call_id", ""))
                          for t in doc.get("conversation") or []],
            tool_calls=calls(doc.get("tool_calls")),
            context=[Passage(id=p.get("id", ""), text=p.get("text", "")) for p in doc.get("context") or []],
            expected=doc.get("expected", "") or "",
            expected_tool_calls=[ExpectedToolCall(name=c.get("name", ""), arguments=c.get("arguments", ""),
                                                  arguments_schema=c.get("arguments_schema", ""))
                                 for c in doc.get("expected_tool_calls") or []],
            citation_audit=doc.get("citation_audit"),
            time=doc.get("time"),
            metadata=dict(doc.get("metadata") or {}),
            raw=dict(doc),
        )

    def purpose(self) -> str:
        """What the agent is for: metadata purpose, instructions or system_prompt, else the
        conversation's first system or developer turn, or ""."""
        for k in ("purpose", "instructions", "system_prompt"):
            v = self.metadata.get(k)
            if isinstance(v, str) and v:
                return v
        for t in self.conversation:
            if t.role in ("system", "developer") and t.content:
                return t.content
        return ""


# --- results ----------------------------------------------------------------------------


@dataclass
class Step:
    """One step of a scorer's pipeline: its name, the prompt it sent, what it parsed."""

    name: str
    prompt: str = ""
    output: Any = None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"name": self.name}
        if self.prompt:
            out["prompt"] = self.prompt
        if self.output is not None:
            out["output"] = self.output
        return out


@dataclass
class Result:
    """What a scorer returns for one run (sdk.Result). A scorer fills score and dimensions
    in its declared native range; the host normalizes them and fills passed.

    Make one with scored(), skipped() or failed()."""

    status: str
    score: Optional[float] = None
    reason: str = ""
    dimensions: Dict[str, float] = field(default_factory=dict)
    skipped_dimensions: Dict[str, str] = field(default_factory=dict)
    flags: List[str] = field(default_factory=list)
    suggestions: List[str] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)
    nodes: List[Dict[str, Any]] = field(default_factory=list)
    error_code: str = ""
    error_message: str = ""
    #: Set by the host (and by scorekit_sdk.testing): the score against the threshold.
    passed: Optional[bool] = None
    #: Set by the host: what it changed and why.
    adjustments: List[Dict[str, Any]] = field(default_factory=list)
    #: Set by the host: what the call cost.
    telemetry: Dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        """The result as the host reads it (result.schema.json)."""
        out: Dict[str, Any] = {"status": self.status}
        if self.score is not None:
            out["score"] = self.score
        if self.passed is not None:
            out["passed"] = self.passed
        if self.dimensions:
            out["dimensions"] = dict(self.dimensions)
        if self.skipped_dimensions:
            out["skipped_dimensions"] = dict(self.skipped_dimensions)
        if self.reason:
            out["reason"] = self.reason
        if self.flags:
            out["flags"] = list(self.flags)
        if self.suggestions:
            out["suggestions"] = list(self.suggestions)
        if self.steps:
            out["steps"] = [s.to_json() for s in self.steps]
        if self.adjustments:
            out["adjustments"] = list(self.adjustments)
        telemetry = dict(self.telemetry)
        telemetry.setdefault("duration_ms", 0)
        if self.nodes:
            telemetry["nodes"] = list(self.nodes)
        out["telemetry"] = telemetry
        if self.error_code or self.error_message:
            out["error"] = {"code": self.error_code, "message": self.error_message}
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "Result":
        err = doc.get("error") or {}
        telemetry = dict(doc.get("telemetry") or {})
        return cls(
            status=doc.get("status", ""),
            score=doc.get("score"),
            reason=doc.get("reason", ""),
            dimensions=dict(doc.get("dimensions") or {}),
            skipped_dimensions=dict(doc.get("skipped_dimensions") or {}),
            flags=list(doc.get("flags") or []),
            suggestions=list(doc.get("suggestions") or []),
            steps=[Step(name=s.get("name", ""), prompt=s.get("prompt", ""), output=s.get("output"))
                   for s in doc.get("steps") or []],
            nodes=list(telemetry.pop("nodes", None) or []),
            error_code=err.get("code", ""),
            error_message=err.get("message", ""),
            passed=doc.get("passed"),
            adjustments=list(doc.get("adjustments") or []),
            telemetry=telemetry,
        )

    def has_flag(self, flag: str) -> bool:
        return flag in self.flags

    def copy(self, **changes: Any) -> "Result":
        return dataclasses.replace(self, **changes)


def scored(score: float, reason: str = "", **fields: Any) -> Result:
    """A scored result, score in the scorer's native range. fields sets the others
    (dimensions, flags, steps, suggestions, skipped_dimensions, nodes)."""
    return Result(status=SCORED, score=float(score), reason=reason, **fields)


def skipped(reason: str, **fields: Any) -> Result:
    """A skipped result: the scorer does not apply to this run; reason says why and, where
    it helps, how to make it apply."""
    return Result(status=SKIPPED, reason=reason, **fields)


def failed(code: str, message: str, **fields: Any) -> Result:
    """A failed result: the scorer tried and could not judge. Never a score of 0."""
    return Result(status=FAILED, reason=message, error_code=code, error_message=message, **fields)


def failed_from(exc: BaseException) -> Result:
    """The failed result for an exception: its code when it is a ScorerError, scorer_error
    with the exception's type and message otherwise."""
    if isinstance(exc, ScorerError):
        return failed(exc.code, exc.message)
    text = str(exc)
    return failed(SCORER_ERROR, f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def no_judge(scorer: str) -> Result:
    """The skipped result of a scorer that needs a judge when none is configured (sdk.NoJudge)."""
    return skipped(scorer + " needs an LLM judge and none is configured: pass --judge-url URL and "
                   "--judge-model NAME (API key from $OPENAI_API_KEY, or --judge-key-env VAR), or set judge.url in the config file")


def validate_result(res: Result) -> Optional[str]:
    """Checks a result as a scorer returned it (sdk.Result.Validate): a known status, a
    finite score when scored and none otherwise, finite dimensions, an error message when
    failed. Returns what is wrong, or None."""
    if res.status == SCORED:
        if res.score is None:
            return "status scored without a score"
    elif res.status == SKIPPED:
        if res.score is not None:
            return "status skipped with a score; return scored or drop the score"
    elif res.status == FAILED:
        if not res.error_message:
            return "status failed without an error message"
        if res.score is not None:
            return "status failed with a score"
    elif res.status == "":
        return "missing status (want scored, skipped or failed)"
    else:
        return f"unknown status {res.status!r} (want scored, skipped or failed)"
    if res.score is not None:
        if isinstance(res.score, bool) or not isinstance(res.score, (int, float)):
            return f"score is {res.score!r}, not a number"
        if not math.isfinite(res.score):
            return f"score is {res.score}"
    for k, v in res.dimensions.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return f"dimension {k!r} is {v!r}"
    return None
