"""The judge: LLM access through the host's broker (sdk.Judge).

A scorer never holds an API key or opens a socket. It asks the judge it is given
(call.judge); the host sends the requests with the tenant's key, within the tenant's
budget, through its cache, and records the calls in the result's telemetry. Requests come
in batches: the host runs a batch concurrently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._contract import JUDGE_ERROR, ScorerError


@dataclass
class Message:
    """One chat message: role is system, user or assistant."""

    role: str
    content: str

    def to_json(self) -> Dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass
class CompletionRequest:
    """One chat completion (sdk.CompletionRequest). json asks for a JSON object; schema is
    the JSON Schema of the answer (structured output where the endpoint offers it); model
    asks for a judge model the operator allows other than the host's."""

    messages: List[Message]
    temperature: float = 0.0
    max_tokens: int = 0
    json: bool = False
    schema: Optional[Mapping[str, Any]] = None
    model: str = ""

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"messages": [m.to_json() for m in self.messages]}
        if self.temperature:
            out["temperature"] = self.temperature
        if self.max_tokens:
            out["max_tokens"] = self.max_tokens
        if self.json:
            out["json"] = True
        if self.schema is not None:
            out["schema"] = dict(self.schema)
        if self.model:
            out["model"] = self.model
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "CompletionRequest":
        return cls(messages=[Message(m.get("role", ""), m.get("content", "")) for m in doc.get("messages") or []],
                   temperature=doc.get("temperature", 0.0), max_tokens=doc.get("max_tokens", 0),
                   json=bool(doc.get("json", False)), schema=doc.get("schema"), model=doc.get("model", ""))

    def last_user(self) -> str:
        """The content of the last user message, or ""."""
        for m in reversed(self.messages):
            if m.role == "user":
                return m.content
        return ""


@dataclass
class CompletionResponse:
    """The answer to one request (sdk.CompletionResponse). cached is true when the host's
    broker answered from its cache; error_code and error_message are set when this request
    failed (content is then empty)."""

    content: str = ""
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    error_code: str = ""
    error_message: str = ""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "CompletionResponse":
        err = doc.get("error") or {}
        return cls(content=doc.get("content", ""), finish_reason=doc.get("finish_reason", ""),
                   prompt_tokens=doc.get("prompt_tokens", 0), completion_tokens=doc.get("completion_tokens", 0),
                   cached=bool(doc.get("cached", False)), error_code=err.get("code", ""),
                   error_message=err.get("message", ""))

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"content": self.content}
        if self.finish_reason:
            out["finish_reason"] = self.finish_reason
        if self.prompt_tokens:
            out["prompt_tokens"] = self.prompt_tokens
        if self.completion_tokens:
            out["completion_tokens"] = self.completion_tokens
        if self.cached:
            out["cached"] = True
        if self.error_code or self.error_message:
            out["error"] = {"code": self.error_code, "message": self.error_message}
        return out


class Judge:
    """LLM access through the host. complete() answers a batch of requests, one response per
    request in order (a request that failed has its error set); a failure of the whole batch
    (budget spent, call over) raises ScorerError with the host's code, which a scorer may
    let through: the call is then failed with that code and message."""

    def complete(self, requests: Sequence[CompletionRequest]) -> List[CompletionResponse]:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> List[List[float]]:
        raise NotImplementedError

    def ask(self, prompt: str, system: str = "", *, json: bool = True, schema: Optional[Mapping[str, Any]] = None,
            max_tokens: int = 0) -> CompletionResponse:
        """Sends one user prompt (with an optional system message), asking for JSON by
        default, and returns its answer; a failed request raises ScorerError."""
        messages = ([Message("system", system)] if system else []) + [Message("user", prompt)]
        out = self.complete([CompletionRequest(messages=messages, json=json, schema=schema, max_tokens=max_tokens)])
        if len(out) != 1:
            raise ScorerError(JUDGE_ERROR, f"the judge returned {len(out)} responses to one request")
        if out[0].error_code or out[0].error_message:
            raise ScorerError(out[0].error_code or JUDGE_ERROR, out[0].error_message)
        return out[0]


@dataclass
class Call:
    """One scoring request: the run, the judge (None when the host gives the scorer none:
    return no_judge(name) then) and the deadline (seconds since the epoch, or None)."""

    run: Any
    judge: Optional[Judge] = None
    deadline: Optional[float] = None
    #: Anything else the host passed, by name (reserved).
    extra: Dict[str, Any] = field(default_factory=dict)

    def time_left(self) -> Optional[float]:
        """Seconds until the deadline (negative when past), or None without one."""
        if self.deadline is None:
            return None
        import time

        return self.deadline - time.time()
