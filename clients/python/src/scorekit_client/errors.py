"""The client's errors: the service's problem details (RFC 9457, with its stable code), or a
failure on the client's side."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional


class ScorekitError(Exception):
    """Every error the client raises: a problem detail the service answered, or a failure on
    the client's side.

    Branch on code, never on the message. The service's codes are listed in docs/SERVICE.md
    (invalid_request, invalid_run, invalid_config, unauthorized, insufficient_scope,
    scorer_not_allowed, not_found, unknown_scorer, body_too_large, rate_limited, overloaded,
    internal ...). The client adds its own, with status 0 when no HTTP answer carried them:

    - unreachable: no answer at all (connection refused, DNS, TLS); __cause__ has the reason;
    - bad_response: an answer that is not the service's (a proxy's HTML page, a body that is
      not JSON); status is the HTTP status and detail the start of the body;
    - wait_timeout: wait_for_evaluation gave up before the evaluation was done; the
      evaluation goes on in the service.
    """

    def __init__(self, code: str, status: int, detail: str, *, title: str = "", errors: Optional[List[Dict[str, Any]]] = None,
                 problem: Optional[Dict[str, Any]] = None, retry_after: Optional[float] = None):
        super().__init__(f"scorekit: {code}{f' (HTTP {status})' if status else ''}: {detail}")
        #: The stable, machine-readable code: what to branch on.
        self.code = code
        #: The HTTP status, or 0 when the service gave no answer.
        self.status = status
        #: What is wrong and, where the service knows, how to fix it.
        self.detail = detail
        #: The HTTP status's title ("Not Found"), when the service answered.
        self.title = title
        #: Field-level errors of a request the service could not validate, when it lists them.
        self.errors: List[Dict[str, Any]] = errors or []
        #: The problem document as the service sent it, when it sent one.
        self.problem = problem
        #: Seconds the service asked to wait before trying again (429, 503), when it said.
        self.retry_after = retry_after


def is_problem(body: Any) -> bool:
    """Whether a parsed body has the shape of the service's problem details."""
    return isinstance(body, dict) and isinstance(body.get("code"), str) and isinstance(body.get("status"), int)


def problem_error(url: str, status: int, reason: str, headers: Any, raw: bytes) -> ScorekitError:
    """The ScorekitError for an error answer: the service's problem, or bad_response."""
    retry: Optional[float] = None
    try:
        value = float(headers.get("Retry-After") or "")
        retry = value if value > 0 else None
    except ValueError:
        pass
    try:
        body: Any = json.loads(raw)
    except ValueError:
        body = raw.decode("utf-8", "replace")
    if is_problem(body):
        return ScorekitError(body["code"], status, body.get("detail") or body.get("title", ""), title=body.get("title", ""),
                             errors=body.get("errors") or [], problem=body, retry_after=retry)
    text = body if isinstance(body, str) else json.dumps(body)
    return ScorekitError("bad_response", status, f"{url} answered HTTP {status} without a problem document: {text[:200]}; "
                         "is the base URL a scorekit service?", title=reason, retry_after=retry)


class ScoreFailedError(AssertionError):
    """A scorer that tried and could not judge where a score is required (the pytest gate):
    the result's status was failed. Never turned into a score of 0."""

    def __init__(self, scorer: str, code: str, detail: str, result: Any):
        super().__init__(f"scorekit: scorer {scorer} failed ({code}): {detail}")
        self.scorer = scorer
        self.code = code
        self.detail = detail
        self.result = result
