"""A test kit for Python scorers, as sdk/scorertest is for Go ones.

ScorerTest scores runs in-process the way the host does: it checks the scorer's Info,
validates the config against its schema and merges it over the defaults, calls the scorer,
and validates, normalizes, weighs, rounds and grades what it returns. A test therefore sees
the result users see (a 1-5 scorer's 4 is 0.75; a score outside the declared range is
failed with invalid_result; an exception is failed with its message), not the raw value.

    from scorekit_sdk.testing import ScorerTest

    def test_within_budget():
        s = ScorerTest(WordBudget, config={"max_words": 10})
        res = s.score({"input": "What is the capital of France?", "output": "Paris"})
        assert res.status == "scored" and res.score == 1 and res.passed

check_contract() runs a scorer over runs and configs and reports every way it breaks the
contract (an invalid Info, a config its schema refuses that it takes, a result the host
would refuse). check_loads() loads a plugin script in a real host, under its sandbox,
through the scorekit command: python3 -m scorekit_sdk check scorer.py does the same.

The host's citation-audit clamps of a grounding dimension (faithfulness,
hallucination_free), and its run limits, apply only in the host: check_loads() and the
host's own tests cover them.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import time
from dataclasses import replace
from importlib import resources
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import jsonschema

from ._contract import (ABI_VERSION, FAILED, INVALID_RESULT, INVALID_RUN, JUDGE_ERROR, SCORED, SCORER_ERROR, SKIPPED,
                        CODES, Info, Result, Run, ScorerError, failed, failed_from, validate_result)
from ._judge import Call, CompletionRequest, CompletionResponse, Judge
from ._scorer import Scorer
from ._serve import Factory, invoke, registry

__all__ = ["ScorerTest", "JudgeFunc", "ConfigError", "InfoError", "ContractError", "LoadError", "check_contract",
           "check_loads", "normalize_run"]

# The host's tolerance at the ends of a range and at a rounding half (host/pipeline.go).
_TOLERANCE = 1e-9
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


class ConfigError(ValueError):
    """The host refuses the config: its schema does not take it, or the scorer refused it."""


class InfoError(ValueError):
    """The host refuses the scorer: its Info breaks the contract."""


class ContractError(AssertionError):
    """check_contract found ways the scorer breaks the contract; problems lists them."""

    def __init__(self, scorer: str, problems: List[str]):
        super().__init__(f"scorer {scorer} breaks the contract:\n  - " + "\n  - ".join(problems))
        self.problems = problems


class LoadError(AssertionError):
    """The plugin does not load in a real host; the message is the host's."""


def _schema(name: str) -> Dict[str, Any]:
    return json.loads(resources.files("scorekit_sdk").joinpath("schemas", f"{name}.schema.json").read_text())


_SCHEMAS: Dict[str, Any] = {}


def _validator(name: str) -> jsonschema.protocols.Validator:
    if name not in _SCHEMAS:
        schema = _schema(name)
        _SCHEMAS[name] = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return _SCHEMAS[name]


def _problem(doc: str, validator: jsonschema.protocols.Validator, instance: Any) -> Optional[str]:
    err = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if err is None:
        return None
    where = ".".join(str(p) for p in err.absolute_path)
    return f"{doc}: {where + ': ' if where else ''}{err.message}"


def check_info(info: Info) -> None:
    """Raises InfoError when the host would refuse info (host.DecodeInfo, the host's plan)."""
    doc = info.to_json()
    problem = _problem("info", _validator("info"), doc)
    if problem:
        raise InfoError(f"scorer {info.name}: {problem}")
    bad = lambda what: InfoError(f"scorer {info.name}: invalid scorer info: {what}; fix the scorer's Info")  # noqa: E731
    if not _NAME.match(info.name):
        raise bad(f"name {info.name!r}: want lower case letters, digits, '_' and '-', starting with a letter")
    if info.abi_version != ABI_VERSION:
        raise bad(f"abi_version {info.abi_version}: this SDK speaks {ABI_VERSION}")
    r = info.range
    if not (math.isfinite(r.min) and math.isfinite(r.max)) or r.max <= r.min:
        raise bad(f"range [{r.min}, {r.max}] is empty; want min < max")
    if info.range_config and (not info.range_config.startswith("/") or "//" in info.range_config):
        raise bad(f"range_config {info.range_config!r}: want a JSON Pointer to a config field, e.g. \"/scale\"")
    if not math.isfinite(info.threshold) or not 0 <= info.threshold <= 1:
        raise bad(f"threshold {info.threshold}: want a normalized score in [0, 1]")
    if not 0 <= info.decimals <= 6:
        raise bad(f"decimals {info.decimals}: want 0-6 (0 means the default, 2)")
    seen = set()
    for d in info.dimensions:
        if not d.name:
            raise bad("a dimension has no name")
        if d.name in seen:
            raise bad(f"dimension {d.name!r} is declared twice")
        if not math.isfinite(d.weight) or d.weight < 0:
            raise bad(f"dimension {d.name!r} has weight {d.weight}; want >= 0")
        seen.add(d.name)
    if info.dimensions and sum(d.weight for d in info.dimensions) <= 0:
        raise bad("dimension weights sum to 0; give at least one a positive weight")
    if info.config_schema is not None:
        try:
            jsonschema.Draft202012Validator.check_schema(dict(info.config_schema))
        except jsonschema.exceptions.SchemaError as e:
            raise bad(f"its config_schema does not compile: {e.message}") from None


def merge_config(info: Info, config: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The config the host hands the scorer: config's fields over info.defaults (a shallow
    merge), validated against info.config_schema; a field the schema does not list is an
    error when the schema says nothing of other fields. Raises ConfigError naming the field."""
    caller = dict(config or {})
    defaults = dict(info.defaults or {})
    if info.config_schema is None:
        if caller:
            raise ConfigError(f"open {info.name}: config: unknown field {sorted(caller)[0]!r}: scorer {info.name} takes no config; drop the config")
        return defaults
    merged = {**defaults, **caller}
    schema = dict(info.config_schema)
    problem = _problem("config", jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER), merged)
    if problem:
        raise ConfigError(f"open {info.name}: {problem}")
    props = schema.get("properties")
    if props and not any(k in schema for k in ("additionalProperties", "patternProperties", "unevaluatedProperties")):
        for k in sorted(caller):
            if k not in props:
                raise ConfigError(f"open {info.name}: config: unknown field {k!r} (known: {', '.join(sorted(props))})")
    return merged


def _config_range(info: Info, config: Mapping[str, Any]) -> Tuple[float, float]:
    r = info.range
    if info.range_config:
        node: Any = config
        for tok in info.range_config[1:].split("/"):
            tok = tok.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or tok not in node:
                return r.min, r.max
            node = node[tok]
        if not isinstance(node, Mapping) or not all(isinstance(node.get(k), (int, float)) for k in ("min", "max")) or node["max"] <= node["min"]:
            raise ConfigError(f"open {info.name}: config: {info.range_config[1:]}: want an object {{\"min\", \"max\"}} with min < max")
        return float(node["min"]), float(node["max"])
    return r.min, r.max


# --- runs ---------------------------------------------------------------------------------


def _id_text(v: Any, what: str) -> str:
    if v is None:
        return ""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ScorerError(INVALID_RUN, f"{what}: want a string or a number, got {json.dumps(v)}")
    return v if isinstance(v, str) else json.dumps(v)


def _value_text(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _content(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(p.get("text") or p.get("refusal") or "" for p in v if isinstance(p, Mapping) and (p.get("text") or p.get("refusal")))
    raise ScorerError(INVALID_RUN, "content: want a string, null or an array of content parts")


def _call(c: Mapping[str, Any]) -> Dict[str, Any]:
    fn = c.get("function") or {}
    return {"id": _id_text(c.get("id"), "tool call id"), "name": c.get("name") or fn.get("name", ""),
            "arguments": _value_text(c.get("arguments") if c.get("arguments") is not None else fn.get("arguments")),
            "result": _value_text(c.get("result"))}


def _turn(t: Mapping[str, Any]) -> Dict[str, Any]:
    return {"role": t.get("role", ""), "content": _content(t.get("content")) or t.get("refusal", "") or "",
            "name": t.get("name", ""), "tool_calls": [_call(c) for c in t.get("tool_calls") or []],
            "tool_call_id": _id_text(t.get("tool_call_id"), "tool_call_id")}


def normalize_run(doc: Mapping[str, Any]) -> Dict[str, Any]:
    """A run in any shape a dataset line may take (sdk.Run.UnmarshalJSON), in the
    normalized shape the host sends a plugin: input and output as text, the conversation
    and tool calls apart, passages numbered. Raises ScorerError(invalid_run) naming the field."""
    if not isinstance(doc, Mapping):
        raise ScorerError(INVALID_RUN, "run: want a JSON object")
    if "output" not in doc:
        raise ScorerError(INVALID_RUN, 'run: missing required field "output"')
    out: Dict[str, Any] = {k: v for k, v in doc.items()}
    out["id"] = _id_text(doc.get("id"), "id")
    conversation = [_turn(t) for t in doc.get("conversation") or []]
    inp = doc.get("input", "")
    if isinstance(inp, list):
        if conversation:
            raise ScorerError(INVALID_RUN, 'input: a conversation is given both as "input" and as "conversation"; keep one')
        conversation = [_turn(t) for t in inp]
        inp = next((t["content"] for t in reversed(conversation) if t["role"] == "user"), "")
    elif inp is not None and not isinstance(inp, str):
        raise ScorerError(INVALID_RUN, "input: want a string or an array of chat messages")
    out["input"], out["conversation"] = inp or "", conversation
    calls = [_call(c) for c in doc.get("tool_calls") or []]
    output = doc.get("output")
    if isinstance(output, (list, Mapping)):
        if calls:
            raise ScorerError(INVALID_RUN, 'output: tool calls are given both in the output\'s messages and as "tool_calls"; keep one')
        text: List[str] = []
        for k, t in enumerate([output] if isinstance(output, Mapping) else output):
            turn = _turn(t)
            if turn["role"] in ("assistant", ""):
                if turn["content"]:
                    text.append(turn["content"])
                calls.extend(turn["tool_calls"])
            elif turn["role"] in ("tool", "function"):
                i = next((j for j, c in enumerate(calls) if turn["tool_call_id"] and c["id"] == turn["tool_call_id"]), -1)
                if i < 0 and not turn["tool_call_id"]:
                    i = next((j for j, c in enumerate(calls) if not c["result"]), -1)
                if i >= 0:
                    calls[i]["result"] = turn["content"]
                else:
                    calls.append({"id": turn["tool_call_id"], "name": turn["name"], "arguments": "", "result": turn["content"]})
            else:
                raise ScorerError(INVALID_RUN, f"output[{k}]: role {turn['role']!r}: the output holds the agent's own turns (assistant and tool messages); put earlier turns in the input")
        output = "\n\n".join(text)
    elif output is not None and not isinstance(output, str):
        raise ScorerError(INVALID_RUN, "output: want a string, an assistant message or an array of messages")
    out["output"], out["tool_calls"] = output or "", calls
    context = []
    for i, p in enumerate(doc.get("context") or []):
        if isinstance(p, str):
            passage = {"id": "", "text": p}
        elif isinstance(p, Mapping):
            passage = {"id": _id_text(p.get("id"), "context passage: id"), "text": p.get("text", "")}
        else:
            raise ScorerError(INVALID_RUN, f"context[{i}]: want a string or {{id, text}}")
        if not passage["text"]:
            raise ScorerError(INVALID_RUN, f"context[{i}] (id {passage['id']!r}) has empty text; drop the passage or fill it")
        passage["id"] = passage["id"] or str(i + 1)
        context.append(passage)
    out["context"] = context
    out["expected_tool_calls"] = [{"name": c.get("name", ""), "arguments": _value_text(c.get("arguments")),
                                   "arguments_schema": _value_text(c.get("arguments_schema"))}
                                  for c in doc.get("expected_tool_calls") or []]
    for i, c in enumerate(out["expected_tool_calls"]):
        if not c["name"]:
            raise ScorerError(INVALID_RUN, f"expected_tool_calls[{i}] has no name; name the tool the agent should call")
    return out


# --- the judge for tests ------------------------------------------------------------------


class JudgeFunc(Judge):
    """A judge for tests (scorertest.JudgeFunc): answer(request) returns each completion's
    content, or raises to fail that request (a ScorerError keeps its code). requests lists
    every request it was asked, in order. Embeddings are not supported."""

    def __init__(self, answer: Callable[[CompletionRequest], str]):
        self.answer = answer
        self.requests: List[CompletionRequest] = []

    def complete(self, requests: Sequence[CompletionRequest]) -> List[CompletionResponse]:
        out = []
        for r in requests:
            self.requests.append(r)
            try:
                out.append(CompletionResponse(content=self.answer(r), finish_reason="stop"))
            except ScorerError as e:
                out.append(CompletionResponse(error_code=e.code, error_message=e.message))
            except Exception as e:  # noqa: BLE001: a failed request, as a judge reports it
                out.append(CompletionResponse(error_code=JUDGE_ERROR, error_message=str(e)))
        return out

    def embed(self, texts: Sequence[str]) -> List[List[float]]:
        raise ScorerError(JUDGE_ERROR, "scorekit_sdk.testing.JudgeFunc does not embed; give the scorer a judge that does")


# --- the host's pipeline ------------------------------------------------------------------


class ScorerTest:
    """A scorer opened as the host opens it, for a test (scorertest.New).

    factory makes the scorer (its class, or a function). config is validated against its
    schema and merged over its defaults (ConfigError when the host would refuse it; InfoError
    for an Info it would refuse); judge is given to a scorer that declares the judge or embed
    capability (a JudgeFunc in tests); scale multiplies final scores as --scale does."""

    def __init__(self, factory: Union[Factory, type], config: Optional[Mapping[str, Any]] = None, *,
                 judge: Optional[Judge] = None, scale: float = 1.0):
        factories, infos = registry([factory])
        self.info: Info = infos[0]
        check_info(self.info)
        self.config = merge_config(self.info, config)
        self._min, hi = _config_range(self.info, self.config)
        self._span = hi - self._min
        # A Python Info always states its range (0-1 unless it says otherwise).
        self._declared = True
        self.judge = judge if judge is not None and ("judge" in self.info.capabilities or "embed" in self.info.capabilities) else None
        self.scale = scale
        self.scorer: Scorer = factories[self.info.name]()
        try:
            self.scorer.configure(dict(self.config))
        except Exception as e:  # noqa: BLE001: a config the scorer refuses
            raise ConfigError(f"configure {self.info.name}: {failed_from(e).error_message}") from e

    def score(self, run: Union[Mapping[str, Any], Run]) -> Result:
        """Scores run (a dict in any shape a dataset line may take, or a Run) and returns the
        result as users see it."""
        start = time.perf_counter()
        try:
            doc = (run.raw or _run_doc(run)) if isinstance(run, Run) else normalize_run(run)
        except ScorerError as e:
            return failed(e.code, e.message)
        res = self.finish(invoke(self.scorer, Call(run=Run.from_json(doc), judge=self.judge)))
        res.telemetry = {**res.telemetry, "duration_ms": (time.perf_counter() - start) * 1e3, "runtime": "in-process"}
        return res

    def score_json(self, line: str) -> Result:
        """Scores one dataset line (JSON), as scorekit score reads it."""
        try:
            doc = json.loads(line)
        except ValueError as e:
            return failed(INVALID_RUN, f"run: {e}")
        return self.score(doc)

    def close(self) -> None:
        self.scorer.close()

    def __enter__(self) -> "ScorerTest":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _invalid(self, why: str) -> Result:
        return failed(INVALID_RESULT, f"scorer {self.info.name} returned an invalid result: {why}")

    def _value(self, target: str, v: float, res: Result) -> float:
        eps = _TOLERANCE * self._span
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < self._min - eps or v > self._min + self._span + eps:
            what = "score" if target == "score" else f"dimension {target!r}"
            rng = f"[{_g(self._min)}, {_g(self._min + self._span)}]"
            if not self._declared:
                raise ValueError(f"{what} is {v}, outside the range {rng} the host assumes when a scorer declares none; "
                                 "if the scorer scores on another scale, declare its range (Info.range, e.g. Range(1, 5))")
            raise ValueError(f"{what} is {v}, outside its declared range {rng}; fix the scorer or its declared range")
        x = min(max((v - self._min) / self._span, 0.0), 1.0)
        if x != v:
            res.adjustments.append({"rule": "normalize_range", "target": target, "from": v, "to": x})
        return x

    def _round(self, v: float) -> float:
        d = 10.0 ** (self.info.decimals or 2)
        x = v * d
        f = math.floor(x)
        if x - f >= 0.5 - _TOLERANCE * max(1.0, x):
            f += 1
        return f / d

    def finish(self, raw: Result) -> Result:
        """What the host makes of a scorer's raw result (host/pipeline.go's finish): validated,
        normalized to 0-1, weighed, scaled, rounded, and graded against the threshold."""
        res = replace(raw, passed=None, adjustments=[], dimensions=dict(raw.dimensions),
                      skipped_dimensions=dict(raw.skipped_dimensions))
        problem = validate_result(res) or _problem("result", _validator("result"), res.to_json())
        if problem:
            return self._invalid(problem)
        if res.status == FAILED and res.error_code not in CODES:
            res.error_message = f"{res.error_message} (unknown error code {res.error_code!r})"
            res.error_code = SCORER_ERROR
        if res.status != SCORED:
            res.dimensions = {}
            return res
        declared = [d.name for d in self.info.dimensions]
        try:
            score = self._value("score", res.score, res)
            if declared:
                for k in sorted(set(res.dimensions) | set(res.skipped_dimensions)):
                    if k not in declared:
                        raise ValueError(f"dimension {k!r} is not declared in its Info (declared: {', '.join(declared)}); declare it or drop it")
            dims: Dict[str, float] = {}
            for name in declared or sorted(res.dimensions):
                if name not in res.dimensions:
                    if name in res.skipped_dimensions:
                        continue
                    raise ValueError(f"missing declared dimension {name!r}; return it or list it in skipped_dimensions with a reason")
                dims[name] = self._value(name, res.dimensions[name], res)
        except ValueError as e:
            return self._invalid(str(e))
        if declared:
            weights = [(d.weight, dims[d.name]) for d in self.info.dimensions if d.name not in res.skipped_dimensions]
            total = sum(w for w, _ in weights)
            if total == 0:
                reasons = "; ".join(f"{k}: {v}" for k, v in sorted(res.skipped_dimensions.items()))
                return replace(res, status=SKIPPED, score=None, dimensions={}, adjustments=[],
                               reason=f"no weighted dimension could be judged ({reasons})")
            overall = sum(w * v for w, v in weights) / total
            if abs(overall - score) > _TOLERANCE:
                res.adjustments.append({"rule": "overall_weighted", "target": "score", "from": score, "to": overall})
                score = overall
        res.passed = score >= self.info.threshold - _TOLERANCE
        res.score = self._round(score * self.scale)
        res.dimensions = {k: self._round(v * self.scale) for k, v in dims.items()}
        return res


def _g(x: float) -> str:
    return f"{x:g}"


def _run_doc(run: Run) -> Dict[str, Any]:
    return {"id": run.id, "input": run.input, "output": run.output, "expected": run.expected,
            "context": [{"id": p.id, "text": p.text} for p in run.context], "metadata": run.metadata}


# --- the contract -------------------------------------------------------------------------


def check_contract(factory: Union[Factory, type], runs: Iterable[Mapping[str, Any]] = (), *,
                   configs: Iterable[Optional[Mapping[str, Any]]] = (None,),
                   bad_configs: Iterable[Mapping[str, Any]] = (), judge: Optional[Judge] = None) -> List[Result]:
    """Checks that the scorer keeps the contract and raises ContractError listing every way
    it does not:

    - its Info is one the host takes (a name, a range with min < max, a threshold in 0-1,
      a config schema that compiles, defaults the schema takes ...);
    - each of configs (None: the defaults alone) is taken by the schema and by configure();
    - each of bad_configs is refused, by the schema or by configure();
    - on every run, under every config, it returns a Result the host takes: a known status,
      a score within its declared range when scored and none otherwise, the dimensions it
      declares, a reason for a skip and an error for a failure; an exception it raises is
      failed with its message (which the contract allows), never a crash.

    Returns the results of the last config, as users see them."""
    problems: List[str] = []
    try:
        _, infos = registry([factory])
    except ValueError as e:
        raise ContractError(getattr(factory, "__name__", str(factory)), [str(e)]) from None
    info = infos[0]
    try:
        check_info(info)
    except InfoError as e:
        raise ContractError(info.name, [str(e)]) from None
    if info.defaults is not None and info.config_schema is not None:
        p = _problem("defaults", jsonschema.Draft202012Validator(dict(info.config_schema)), dict(info.defaults))
        if p:
            problems.append(f"its defaults do not satisfy its own config_schema: {p}")
    runs = list(runs)
    results: List[Result] = []
    for config in configs:
        try:
            kit = ScorerTest(factory, config, judge=judge)
        except (ConfigError, InfoError) as e:
            problems.append(f"config {json.dumps(config)} is refused: {e}")
            continue
        results = []
        for i, run in enumerate(runs):
            raw = invoke(kit.scorer, Call(run=Run.from_json(normalize_run(run)), judge=kit.judge))
            res = kit.finish(raw)
            results.append(res)
            where = f"run {i} ({json.dumps(config)} config)"
            if res.status == FAILED and res.error_code == INVALID_RESULT:
                problems.append(f"{where}: {res.error_message}")
            elif res.status == SKIPPED and not res.reason:
                problems.append(f"{where}: skipped without a reason; say why the scorer does not apply")
        kit.close()
    for config in bad_configs:
        try:
            ScorerTest(factory, config, judge=judge).close()
        except ConfigError:
            continue
        problems.append(f"config {json.dumps(config)} was taken; the schema or configure() should refuse it")
    if problems:
        raise ContractError(info.name, problems)
    return results


# --- a real host --------------------------------------------------------------------------


def sdk_path() -> str:
    """The folder Python imports scorekit_sdk from: what a plugin's PYTHONPATH must hold."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check_loads(script: str, *, scorekit: Optional[str] = None, out: Optional[str] = None,
                extra_read: Sequence[str] = ()) -> Tuple[str, List[str]]:
    """Writes the plugin's manifest (NAME.plugin.json next to the script unless out says
    otherwise) and loads it once in a real host, under its sandbox, with the scorekit
    command (scorekit plugin manifest): the one command that proves a Python plugin loads.

    The manifest points Python at this SDK (env PYTHONPATH, and "read" for the sandbox)
    unless it is where the sandbox shows it anyway (under /usr). Returns the manifest's path
    and the scorers' names; raises LoadError with the host's message when it does not load."""
    exe = scorekit or os.environ.get("SCOREKIT_BIN") or shutil.which("scorekit")
    if not exe:
        raise LoadError("the scorekit command is not on PATH: build it (make build in the scorekit checkout puts it in bin/) or set SCOREKIT_BIN")
    if not os.path.isfile(script):
        raise LoadError(f"{script}: no such file")
    if not os.access(script, os.X_OK):
        raise LoadError(f"{script} is not executable: the host runs it as the plugin; chmod +x {script} (its first line must be #!/usr/bin/env python3)")
    args = [exe, "plugin", "manifest", "--runtime", "process"]
    where = sdk_path()
    for path in [where, *extra_read]:
        if not os.path.abspath(path).startswith("/usr/"):
            args += ["--read", path]
    if not where.startswith("/usr/"):
        args += ["--env", "PYTHONPATH=" + where]
    if out:
        args += ["-o", out]
    proc = subprocess.run(args + [script], capture_output=True, text=True)
    if proc.returncode != 0:
        raise LoadError(proc.stderr.strip() or proc.stdout.strip() or f"scorekit plugin manifest exited {proc.returncode}")
    m = re.search(r"^wrote (.+?) \(process, sha256 [0-9a-f]+\): scorers (.+)$", proc.stdout, re.MULTILINE)
    if not m:
        raise LoadError(f"scorekit plugin manifest said: {proc.stdout.strip()}")
    return m.group(1), [n.strip() for n in m.group(2).split(",")]
