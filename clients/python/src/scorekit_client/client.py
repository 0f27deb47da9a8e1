"""ScorekitClient: the scorekit evaluation service from Python, typed from its OpenAPI
document (openapi.json), with the operations of the TypeScript client."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union, cast

from ._openapi import OPERATIONS
from .errors import ScorekitError, problem_error
from .types import (AgentsPage, AgreementQuery, AuditEntry, Deleted, Evaluation, EvaluationRequest, ImportResult,
                    Insight, InsightsPage, JudgeEndpoint, Label, LabelImportResult, LabelInput, LabelQuery, LabelsPage,
                    Policy, PublishedVersion, PublishRequest, Result, Run, RunsPage, RunView, ScoreLabelledResult,
                    ScoreRequest, ScorerAgreement, ScorerInfo)

#: The longest wait one request asks the service for; it allows up to 60 s.
LONG_POLL_SECONDS = 30.0


def fixed(x: float, digits: int) -> float:
    """x to `digits` decimals as Go's fmt prints it (%.Nf): correctly rounded, an exact tie
    to the even neighbour. Python's format does the same."""
    return float(f"{x:.{digits}f}")


def round_mean(mean: Optional[float]) -> Optional[float]:
    """A mean as the scorekit command line prints it (2 decimals); None stays."""
    return fixed(mean, 2) if isinstance(mean, (int, float)) and not isinstance(mean, bool) else mean


def round_pass_rate(rate: Optional[float]) -> Optional[float]:
    """A pass rate (0-1) as the command line prints it: a whole percent."""
    return fixed(rate * 100, 0) / 100 if isinstance(rate, (int, float)) and not isinstance(rate, bool) else rate


def round_evaluation(ev: Evaluation) -> Evaluation:
    """Rounds an evaluation's means and pass rates as the command line prints them, in place."""
    for s in ev.get("scorers") or []:
        s["mean"] = round_mean(s.get("mean"))
        s["pass_rate"] = round_pass_rate(s.get("pass_rate"))
        prev = s.get("previous")
        if prev:
            prev["mean"] = round_mean(prev.get("mean"))
            prev["pass_rate"] = round_pass_rate(prev.get("pass_rate"))
    return ev


def round_insight(insight: Insight) -> Insight:
    ev = insight["evidence"]
    ev["window"]["mean"] = round_mean(ev["window"].get("mean"))
    if ev.get("previous"):
        ev["previous"]["mean"] = round_mean(ev["previous"].get("mean"))
    return insight


def _query(params: Mapping[str, Any]) -> str:
    pairs = []
    for k, v in params.items():
        if v is None:
            continue
        pairs.append((k, "true" if v is True else "false" if v is False else str(v)))
    return ("?" + urllib.parse.urlencode(pairs)) if pairs else ""


class ScorekitClient:
    """Calls the scorekit evaluation service. Each method is one operation of
    openapi.json, its bodies and answers typed from it (scorekit_client.types);
    a problem-detail answer is raised as a ScorekitError carrying code, status and detail.
    Means and pass rates come rounded as the command line prints them; request() gives any
    operation's raw answer.

        client = ScorekitClient("http://127.0.0.1:8080", api_key=os.environ["SCOREKIT_KEY"])
        result = client.score({"scorer": "prescreen", "run": {"input": "What is the capital of France?", "output": "Paris"}})
    """

    def __init__(self, base_url: str, api_key: Optional[str] = None, *, headers: Optional[Mapping[str, str]] = None,
                 timeout: float = 90.0):
        if not base_url:
            raise ValueError("ScorekitClient: base_url is required, e.g. http://127.0.0.1:8080 (where scorekit serve listens)")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._headers = dict(headers or {})
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"

    # --- the transport ----------------------------------------------------------------

    def _open(self, operation: str, path: Mapping[str, Any] = {}, query: Mapping[str, Any] = {}, body: Any = None,
              content_type: str = "application/json", timeout: Optional[float] = None) -> Any:
        method, template = OPERATIONS[operation]
        url = self.base_url + template.format(**{k: urllib.parse.quote(str(v), safe="") for k, v in path.items()}) + _query(query)
        data = None
        headers = {"Accept": "application/json, application/problem+json", **self._headers}
        if body is not None:
            data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            return urllib.request.urlopen(req, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as e:
            raise problem_error(url, e.code, e.reason, e.headers, e.read()) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ScorekitError("unreachable", 0, f"cannot reach the scorekit service at {self.base_url}: {reason}; "
                                "check the URL and that scorekit serve is running") from e

    def request(self, operation: str, *, path: Mapping[str, Any] = {}, query: Mapping[str, Any] = {}, body: Any = None,
                content_type: str = "application/json", timeout: Optional[float] = None) -> Any:
        """Calls any operation of the API by its operationId (scorekit_client.OPERATIONS) and
        returns its decoded JSON answer (None for an empty one), unrounded."""
        with self._open(operation, path, query, body, content_type, timeout) as resp:
            raw = resp.read()
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as e:
            raise ScorekitError("bad_response", 0, f"{self.base_url} answered with a body that is not JSON ({e}); "
                                "is the base URL a scorekit service?") from None

    # --- scoring, runs and evaluations ------------------------------------------------

    def score(self, request: ScoreRequest) -> Result:
        """Scores one run with one scorer; nothing is stored (POST /v1/score)."""
        return cast(Result, self.request("score", body=request))

    def import_runs(self, runs: Union[Run, Sequence[Run], str], agent: Optional[str] = None) -> ImportResult:
        """Stores runs (POST /v1/runs): one run, a list of runs, or JSONL text (one run a
        line). agent names the agent of runs that name none. Runs are stored once per id; a
        bad run is rejected with its line and reason in the answer, and the others are kept."""
        if isinstance(runs, str):
            return cast(ImportResult, self.request("import-runs", query={"agent": agent}, body=runs, content_type="application/x-ndjson"))
        return cast(ImportResult, self.request("import-runs", query={"agent": agent}, body=runs if isinstance(runs, Mapping) else list(runs)))

    def create_evaluation(self, agent: str, request: EvaluationRequest) -> Evaluation:
        """Starts an evaluation of the agent's `limit` newest runs (POST
        /v1/agents/{agent}/evaluations) and returns it at once, running; follow it with
        get_evaluation or wait_for_evaluation, or call evaluate."""
        return round_evaluation(self.request("create-evaluation", path={"agent": agent}, body=request))

    def get_evaluation(self, id: str, *, wait: Optional[str] = None, results: Optional[bool] = None,
                       steps: Optional[bool] = None) -> Evaluation:
        """Reads an evaluation (GET /v1/evaluations/{id}). wait ("30s", at most "60s") makes
        the service hold the answer until the evaluation is done or the wait ends."""
        seconds = _seconds(wait) if wait else 0
        return round_evaluation(self.request("get-evaluation", path={"id": id}, query={"wait": wait, "results": results, "steps": steps},
                                             timeout=self.timeout + seconds))

    def wait_for_evaluation(self, id: str, *, timeout: float = 120.0, results: Optional[bool] = None,
                            steps: Optional[bool] = None) -> Evaluation:
        """Waits until the evaluation is done and returns it, asking the service to hold each
        request up to 30 s (no busy polling). Raises ScorekitError wait_timeout after timeout
        seconds; the evaluation goes on in the service."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            wait = max(0.001, min(left, LONG_POLL_SECONDS))
            ev = self.get_evaluation(id, wait=f"{int(wait * 1000)}ms", results=results, steps=steps)
            if ev.get("status") == "done":
                return ev
            if time.monotonic() >= deadline:
                raise ScorekitError("wait_timeout", 0, f"evaluation {id} is not done after {timeout:g} s "
                                    f"({ev.get('done_results')} of {ev.get('expected_results')} results); it goes on in the service: "
                                    "wait again, or raise timeout")

    def evaluate(self, agent: str, request: EvaluationRequest, *, timeout: float = 120.0, results: Optional[bool] = None,
                 steps: Optional[bool] = None) -> Evaluation:
        """Starts an evaluation of the agent's newest runs and waits until it is done."""
        ev = self.create_evaluation(agent, request)
        return self.wait_for_evaluation(ev["id"], timeout=timeout, results=results, steps=steps)

    def list_evaluations(self, agent: str, limit: Optional[int] = None) -> List[Evaluation]:
        """The agent's evaluations, newest first, with their summaries (GET /v1/agents/{agent}/evaluations)."""
        return [round_evaluation(e) for e in self.request("list-evaluations", path={"agent": agent}, query={"limit": limit}) or []]

    def get_run(self, id: str, steps: Optional[bool] = None) -> RunView:
        """A stored run with every result it ever had, oldest first (GET /v1/runs/{id})."""
        return cast(RunView, self.request("get-run", path={"id": id}, query={"steps": steps}))

    def list_runs(self, agent: str, limit: Optional[int] = None, cursor: Optional[str] = None) -> RunsPage:
        """A page of the agent's runs, newest first (GET /v1/agents/{agent}/runs); next is the cursor of the next page."""
        return cast(RunsPage, self.request("list-runs", path={"agent": agent}, query={"limit": limit, "cursor": cursor}))

    def list_agents(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> AgentsPage:
        """A page of the tenant's agents with their run counts (GET /v1/agents)."""
        return cast(AgentsPage, self.request("list-agents", query={"limit": limit, "cursor": cursor}))

    def delete_run(self, id: str) -> Deleted:
        """Deletes a run and its results (DELETE /v1/runs/{id}); an import of its id within 30 days answers deleted and stores nothing."""
        return cast(Deleted, self.request("delete-run", path={"id": id}))

    def delete_agent(self, agent: str) -> Deleted:
        """Deletes an agent: its runs, results, evaluations, insights and policy (DELETE /v1/agents/{agent})."""
        return cast(Deleted, self.request("delete-agent", path={"agent": agent}))

    def delete_tenant(self) -> Deleted:
        """Deletes the key's tenant and everything it owns, its keys first (DELETE /v1/tenant); export first to keep a copy."""
        return cast(Deleted, self.request("delete-tenant"))

    def audit_log(self, limit: Optional[int] = None, before: Optional[int] = None) -> List[AuditEntry]:
        """The tenant's audit log, newest first (GET /v1/audit): who deleted or exported what, and when."""
        return (self.request("audit-log", query={"limit": limit, "before": before}) or {}).get("entries") or []

    def export(self) -> Iterator[Dict[str, Any]]:
        """Everything the tenant owns (GET /v1/export), line by line as the service streams
        it: {"kind": ..., "data": ...}. Raises ScorekitError export_cut_short when the stream
        ends without its end line."""
        ended = False
        with self._open("export") as resp:
            for raw in resp:
                line = raw.strip()
                if not line:
                    continue
                doc = json.loads(line)
                ended = doc.get("kind") == "end"
                yield doc
        if not ended:
            raise ScorekitError("export_cut_short", 0, "the export ended without its end line: it was cut short; export again")

    # --- scorers and publishing -------------------------------------------------------

    def list_scorers(self) -> List[ScorerInfo]:
        """The scorers the tenant may run (GET /v1/scorers)."""
        return self.request("list-scorers") or []

    def publish_scorer(self, request: PublishRequest, module: Optional[bytes] = None) -> PublishedVersion:
        """Publishes a new version of one of the tenant's scorers (POST /v1/scorers): a
        configured scorer (base, config) or a WASM one (module, as bytes: sent as base64). A
        refusal is a ScorekitError scorer_refused (422) or body_too_large (413) whose detail
        says what to fix."""
        body = dict(request)
        if module is not None:
            body["module"] = base64.b64encode(module).decode()
        return cast(PublishedVersion, self.request("publish-scorer", body=body))

    def list_scorer_versions(self, name: str) -> List[PublishedVersion]:
        """The versions of one of the tenant's scorers, oldest first (GET /v1/scorers/{name}/versions)."""
        return self.request("list-scorer-versions", path={"name": name}) or []

    def get_scorer_version(self, name: str, version: int) -> PublishedVersion:
        """One version of one of the tenant's scorers (GET /v1/scorers/{name}/versions/{version})."""
        return cast(PublishedVersion, self.request("get-scorer-version", path={"name": name, "version": version}))

    def promote_scorer(self, name: str, version: int, override: Optional[str] = None) -> PublishedVersion:
        """Makes the plain name follow version; an older one is the rollback (POST .../promote).
        Under the tenant's agreement gate a refused promotion is a ScorekitError agreement_gate;
        override (the reason) promotes it anyway, recorded with the promotion."""
        body = {"override": override} if override is not None else None
        return cast(PublishedVersion, self.request("promote-scorer-version", path={"name": name, "version": version}, body=body))

    def delete_scorer_version(self, name: str, version: int) -> None:
        """Deletes a version that is not promoted; its results stay (DELETE /v1/scorers/{name}/versions/{version})."""
        self.request("delete-scorer-version", path={"name": name, "version": version})

    # --- policies and the judge -------------------------------------------------------

    def get_policy(self, agent: str) -> Policy:
        """The agent's on-arrival policy (GET /v1/agents/{agent}/policy); not_found when it has none."""
        return cast(Policy, self.request("get-agent-policy", path={"agent": agent}))

    def put_policy(self, agent: str, policy: Policy) -> Policy:
        """Sets the agent's on-arrival policy (PUT /v1/agents/{agent}/policy)."""
        return cast(Policy, self.request("put-agent-policy", path={"agent": agent}, body=policy))

    def delete_policy(self, agent: str) -> None:
        """Removes the agent's on-arrival policy (DELETE /v1/agents/{agent}/policy)."""
        self.request("delete-agent-policy", path={"agent": agent})

    def list_judge_endpoints(self) -> List[JudgeEndpoint]:
        """The judge endpoints the operator allows, their models and the state of the tenant's own key for each (GET /v1/judge/endpoints)."""
        return self.request("list-judge-endpoints") or []

    def set_judge_key(self, endpoint: str, key: str) -> None:
        """Stores the tenant's own API key for a judge endpoint (PUT
        /v1/judge/endpoints/{endpoint}/key, an admin key's): the tenant's judge calls there
        carry it from then on. It is sealed before it is stored and never returned."""
        self.request("put-judge-key", path={"endpoint": endpoint}, body={"key": key})

    def delete_judge_key(self, endpoint: str) -> None:
        """Removes the tenant's own key for a judge endpoint (DELETE /v1/judge/endpoints/{endpoint}/key)."""
        self.request("delete-judge-key", path={"endpoint": endpoint})

    # --- insights ---------------------------------------------------------------------

    def list_insights(self, **query: Any) -> InsightsPage:
        """The tenant's insights, most severe first (GET /v1/insights; query as
        ListInsightsQuery: wait, severity, state, limit, cursor)."""
        return _round_insights(self.request("list-insights", query=query, timeout=self.timeout + _seconds(query.get("wait"))))

    def list_agent_insights(self, agent: str, **query: Any) -> InsightsPage:
        """The insights of one agent (GET /v1/agents/{agent}/insights), with list_insights' query."""
        return _round_insights(self.request("list-agent-insights", path={"agent": agent}, query=query,
                                            timeout=self.timeout + _seconds(query.get("wait"))))

    def get_insight(self, id: str) -> Insight:
        """One insight, open or resolved, with its evidence (GET /v1/insights/{id})."""
        return round_insight(self.request("get-insight", path={"id": id}))

    # --- labels and agreement ---------------------------------------------------------

    def put_label(self, run_id: str, scorer: str, label: LabelInput) -> Label:
        """Records a person's judgement of a run for a scorer or a criterion (PUT
        /v1/runs/{id}/labels/{scorer}): the labeller and exactly one of passed, score (0 to
        1) or choice. The same labeller labelling again replaces their label."""
        return cast(Label, self.request("put-label", path={"id": run_id, "scorer": scorer}, body=label))

    def list_run_labels(self, run_id: str, scorer: Optional[str] = None) -> List[Label]:
        """A run's labels, of one scorer when given (GET /v1/runs/{id}/labels)."""
        return self.request("list-run-labels", path={"id": run_id}, query={"scorer": scorer}) or []

    def list_labels(self, **query: Any) -> LabelsPage:
        """A page of the tenant's labels, by scorer or labeller when given (GET /v1/labels; query as ListLabelsQuery)."""
        return cast(LabelsPage, self.request("list-labels", query=cast(LabelQuery, query)))

    def delete_label(self, run_id: str, scorer: str, labeller: str) -> None:
        """Removes the labeller's label of the run for the scorer (DELETE /v1/runs/{id}/labels/{scorer})."""
        self.request("delete-label", path={"id": run_id, "scorer": scorer}, query={"labeller": labeller})

    def import_labels(self, labels: Union[str, Sequence[Mapping[str, Any]]]) -> LabelImportResult:
        """Stores labels (POST /v1/labels) from JSONL text or a list of lines (a label with
        its run_id and scorer); a bad line is rejected with its number and reason, the
        others are stored."""
        body = labels if isinstance(labels, str) else "\n".join(json.dumps(l) for l in labels)
        return cast(LabelImportResult, self.request("import-labels", body=body, content_type="application/x-ndjson"))

    def get_agreement(self, scorer: str, **query: Any) -> ScorerAgreement:
        """How well a scorer version agrees with the tenant's labels (GET
        /v1/scorers/{scorer}/agreement; query as GetAgreementQuery): accuracy, Cohen's kappa,
        failure precision and recall, the confusion matrix, Spearman, Kendall and MAE, each
        with its 95% interval and N; the disagreements; the labellers' agreement with each
        other; the runs not scored yet."""
        return cast(ScorerAgreement, self.request("get-agreement", path={"scorer": scorer}, query=cast(AgreementQuery, query)))

    def score_labelled(self, scorer: str, criterion: Optional[str] = None) -> ScoreLabelledResult:
        """Enqueues the scoring of the labelled runs the service's version of the scorer has
        not scored (POST /v1/scorers/{scorer}/agreement/score), one evaluation per agent;
        follow them with wait_for_evaluation."""
        return cast(ScoreLabelledResult, self.request("score-labelled", path={"scorer": scorer}, query={"criterion": criterion}))


def _round_insights(page: InsightsPage) -> InsightsPage:
    page["insights"] = [round_insight(i) for i in page.get("insights") or []]
    return page


def _seconds(wait: Optional[str]) -> float:
    """The length of a Go duration the service waits ("30s", "1500ms"), for the socket's timeout."""
    if not wait:
        return 0.0
    units = {"ms": 1e-3, "s": 1.0, "m": 60.0}
    for unit in ("ms", "s", "m"):
        if wait.endswith(unit):
            try:
                return float(wait[: -len(unit)]) * units[unit]
            except ValueError:
                return 0.0
    return 0.0
