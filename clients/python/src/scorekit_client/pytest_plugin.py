"""A pytest gate for agents: the `scorekit` fixture scores a test's runs and fails the test
with the scorer's reason when a threshold is missed, as `scorekit score --fail-under` fails
a run of the command on a file.

    def test_the_agent_answers_within_budget(scorekit):
        runs = [{"input": q, "output": my_agent(q)} for q in QUESTIONS]
        scorekit.check(runs, scorers=["prescreen", "word_budget"], fail_under={"word_budget": 0.8})

Where the runs are scored:
- by default, locally with the scorekit command (--scorekit-bin, $SCOREKIT_BIN, else scorekit
  on PATH), with the plugins of --scorekit-plugins DIR (repeatable) beside the built-ins;
- against a service when --scorekit-url (or $SCOREKIT_URL) names one, with the key in
  $SCOREKIT_KEY: each run through POST /v1/score (nothing stored), or, with agent=, stored
  and evaluated as the agent's runs.

What fails the test (pytest.fail, so JUnit output records the message as the failure):
- a scorer in fail_under whose mean over its scored runs is below the minimum;
- for a scorer not in fail_under, any scored run that does not pass the scorer's threshold;
- more failed results than max_failed (default 0): a scorer that could not judge is never a
  score of 0, and never a silent pass either.
Skipped runs fail nothing; the report lists them with their reasons. Each scorer's mean,
pass rate and counts are recorded as the test's properties (scorekit.SCORER.mean ...), which
pytest's --junitxml writes into the report.

The plugin is registered with pytest (entry point pytest11) when scorekit-client is
installed; without installing, load it with -p scorekit_client.pytest_plugin.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

import pytest

from .client import ScorekitClient, fixed, round_mean, round_pass_rate
from .errors import ScorekitError


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("scorekit", "scorekit: gate tests on scorers")
    group.addoption("--scorekit-bin", default=None, help="the scorekit command for local scoring (default: $SCOREKIT_BIN, else scorekit on PATH)")
    group.addoption("--scorekit-plugins", action="append", default=[], help="a folder of plugin manifests the local scorekit loads (repeatable)")
    group.addoption("--scorekit-url", default=None, help="score against this scorekit service instead (default: $SCOREKIT_URL); its key comes from $SCOREKIT_KEY")


@dataclass
class ScorerReport:
    """What one scorer said of the runs: counts, the mean and pass rate over scored results
    (as the command line prints them), and every result with its run's index and id."""

    scorer: str
    results: List[Dict[str, Any]] = field(default_factory=list)

    def _of(self, status: str) -> List[Dict[str, Any]]:
        return [r for r in self.results if r.get("status") == status]

    @property
    def scored(self) -> int:
        return len(self._of("scored"))

    @property
    def skipped(self) -> int:
        return len(self._of("skipped"))

    @property
    def failed(self) -> int:
        return len(self._of("failed"))

    @property
    def raw_mean(self) -> Optional[float]:
        s = self._of("scored")
        return sum(r["score"] for r in s) / len(s) if s else None

    @property
    def mean(self) -> Optional[float]:
        return round_mean(self.raw_mean)

    @property
    def pass_rate(self) -> Optional[float]:
        s = self._of("scored")
        return round_pass_rate(sum(1 for r in s if r.get("passed")) / len(s)) if s else None


@dataclass
class Report:
    """The report of one check: a ScorerReport per scorer, by name."""

    scorers: Dict[str, ScorerReport]

    def __getitem__(self, scorer: str) -> ScorerReport:
        return self.scorers[scorer]


def _describe(r: Dict[str, Any]) -> str:
    who = f"run {r['_index'] + 1}" + (f" (id {r['run_id']})" if r.get("run_id") and not str(r["run_id"]).startswith("line-") else "")
    if r.get("status") == "failed":
        err = r.get("error") or {}
        return f"{who}: failed {err.get('code', '')}: {err.get('message') or r.get('reason', '')}"
    if r.get("status") == "skipped":
        return f"{who}: skipped: {r.get('reason', '')}"
    return f"{who}: score {fixed(r['score'], 2):.2f}: {r.get('reason', '')}"


class Gate:
    """The `scorekit` fixture: score(runs, scorers) reports; check(...) also fails the test."""

    def __init__(self, node: Any, config: Any):
        self._node = node
        opt = config.getoption
        self.bin = opt("--scorekit-bin") or os.environ.get("SCOREKIT_BIN") or shutil.which("scorekit") or "scorekit"
        self.plugins: List[str] = list(opt("--scorekit-plugins") or [])
        self.url = opt("--scorekit-url") or os.environ.get("SCOREKIT_URL") or ""
        self.key = os.environ.get("SCOREKIT_KEY") or None

    def score(self, runs: Sequence[Mapping[str, Any]], scorers: Sequence[str], *, config: Optional[Mapping[str, Mapping[str, Any]]] = None,
              agent: Optional[str] = None) -> Report:
        """Scores every run with every scorer (config: a config per scorer, by name) and
        returns the report, failing nothing."""
        if not runs:
            pytest.fail("scorekit gate: no runs to score; give the runs the test produced", pytrace=False)
        if not scorers:
            pytest.fail("scorekit gate: no scorers named; name the scorers to gate on", pytrace=False)
        results = self._service(runs, scorers, config or {}, agent) if self.url else self._local(runs, scorers, config or {})
        report = Report({s: ScorerReport(s) for s in scorers})
        for r in results:
            report.scorers[r["scorer"]].results.append(r)
        for s in report.scorers.values():
            for name, value in (("mean", s.mean), ("pass_rate", s.pass_rate), ("scored", s.scored), ("skipped", s.skipped), ("failed", s.failed)):
                self._node.user_properties.append((f"scorekit.{s.scorer}.{name}", "" if value is None else value))
        return report

    def check(self, runs: Sequence[Mapping[str, Any]], scorers: Sequence[str], *, fail_under: Optional[Mapping[str, float]] = None,
              max_failed: int = 0, config: Optional[Mapping[str, Mapping[str, Any]]] = None, agent: Optional[str] = None) -> Report:
        """Scores the runs and fails the test, with the scorers' reasons, when a gate is
        missed (see the module's documentation). Returns the report otherwise."""
        fail_under = dict(fail_under or {})
        unknown = sorted(set(fail_under) - set(scorers))
        if unknown:
            pytest.fail(f"scorekit gate: fail_under names {', '.join(unknown)}, which the check does not score; add it to scorers", pytrace=False)
        report = self.score(runs, scorers, config=config, agent=agent)
        problems: List[str] = []
        failed = [r for s in report.scorers.values() for r in s.results if r.get("status") == "failed"]
        for name in scorers:
            s = report[name]
            scored = [r for r in s.results if r.get("status") == "scored"]
            if name in fail_under:
                lowest = sorted(scored, key=lambda r: r["score"])[:3]
                if not scored:
                    problems.append(f"{name}: no run was scored, so its mean cannot reach {fail_under[name]:.2f}" +
                                    "".join("\n  " + _describe(r) for r in s.results[:3]))
                elif s.raw_mean < fail_under[name]:
                    problems.append(f"{name}: mean {s.mean:.2f} over {len(scored)} scored results < {fail_under[name]:.2f}; lowest:" +
                                    "".join("\n  " + _describe(r) for r in lowest))
                continue
            missed = [r for r in scored if not r.get("passed")]
            if missed:
                problems.append(f"{name}: {len(missed)} of {len(scored)} scored runs missed the scorer's threshold:" +
                                "".join("\n  " + _describe(r) for r in missed))
        if len(failed) > max_failed:
            problems.append(f"{len(failed)} result(s) failed (at most {max_failed} allowed); a scorer that could not judge is not a pass:" +
                            "".join(f"\n  {r['scorer']} " + _describe(r) for r in failed))
        if problems:
            pytest.fail("scorekit gate FAILED:\n" + "\n".join(problems), pytrace=False)
        return report

    # --- where the runs are scored ----------------------------------------------------

    def _local(self, runs: Sequence[Mapping[str, Any]], scorers: Sequence[str], config: Mapping[str, Mapping[str, Any]]) -> List[Dict[str, Any]]:
        with tempfile.TemporaryDirectory(prefix="scorekit-gate-") as tmp:
            data = os.path.join(tmp, "runs.jsonl")
            with open(data, "w") as f:
                for run in runs:
                    f.write(json.dumps(run) + "\n")
            args = [self.bin, "score", "--format", "jsonl", "--scorers", ",".join(scorers)]
            for p in self.plugins:
                args += ["--plugins", p]
            if config:
                cfg = os.path.join(tmp, "scorekit.json")
                with open(cfg, "w") as f:
                    json.dump({"scorers": dict(config)}, f)
                args += ["--config", cfg]
            try:
                proc = subprocess.run(args + [data], capture_output=True, text=True)
            except FileNotFoundError:
                pytest.fail(f"scorekit gate: the scorekit command {self.bin!r} is not there: build it (make build puts it in bin/), "
                            "pass --scorekit-bin or set SCOREKIT_BIN, or score against a service with --scorekit-url", pytrace=False)
        if proc.returncode != 0:
            pytest.fail(f"scorekit gate: {' '.join(args[:5])} ... exited {proc.returncode}:\n{proc.stderr.strip()}", pytrace=False)
        out = []
        for line in proc.stdout.splitlines():
            if line.strip():
                r = json.loads(line)
                r["_index"] = r["line"] - 1
                out.append(r)
        return out

    def _service(self, runs: Sequence[Mapping[str, Any]], scorers: Sequence[str], config: Mapping[str, Mapping[str, Any]],
                 agent: Optional[str]) -> List[Dict[str, Any]]:
        try:
            return self._service_results(runs, scorers, config, agent)
        except ScorekitError as e:
            failure = f"scorekit gate: the service at {self.url} answered {e.code} (HTTP {e.status}): {e.detail}"
        pytest.fail(failure, pytrace=False)

    def _service_results(self, runs: Sequence[Mapping[str, Any]], scorers: Sequence[str], config: Mapping[str, Mapping[str, Any]],
                         agent: Optional[str]) -> List[Dict[str, Any]]:
        client = ScorekitClient(self.url, api_key=self.key)
        out: List[Dict[str, Any]] = []
        if agent is None:
            for i, run in enumerate(runs):
                for s in scorers:
                    body: Dict[str, Any] = {"scorer": s, "run": dict(run)}
                    if s in config:
                        body["config"] = dict(config[s])
                    r = dict(client.score(body))
                    out.append({**r, "scorer": s, "run_id": run.get("id", ""), "_index": i})
            return out
        if config:
            pytest.fail("scorekit gate: config applies to runs scored one by one; an agent's evaluation uses its policy's configs", pytrace=False)
        stored = [{**dict(run), "agent": agent} for run in runs]
        imported = client.import_runs(stored)
        if imported.get("rejected"):
            bad = [r for r in imported.get("runs") or [] if r.get("status") == "rejected"]
            pytest.fail("scorekit gate: the service rejected runs: " + "; ".join(f"line {r.get('line')}: {r.get('error')}" for r in bad), pytrace=False)
        ids = [r.get("id") for r in imported.get("runs") or []]
        ev = client.evaluate(agent, {"limit": len(stored), "scorers": list(scorers)}, timeout=300)
        index = {rid: i for i, rid in enumerate(ids)}
        for r in ev.get("results") or []:
            out.append({**r, "_index": index.get(r.get("run_id"), 0)})
        return out


@pytest.fixture
def scorekit(request: Any) -> Gate:
    """Scores the test's runs with scorekit and fails the test when a gate is missed."""
    return Gate(request.node, request.config)
