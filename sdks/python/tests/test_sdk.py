"""Tests of the scorer SDK: the contract's JSON, the test kit's copy of the host's pipeline,
the contract check, the plugin's gRPC protocol driven directly, and the check that a plugin
loads in a real host (SCOREKIT_BIN, which the Go test that runs these sets)."""

import json
import math
import os
import subprocess
import sys
import textwrap
import time

import grpc
import pytest

from scorekit_sdk import (CAP_JUDGE, Dimension, Info, Range, Result, Scorer, ScorerError, Step, failed, scored, skipped)
from scorekit_sdk._proto import (health_pb2, health_pb2_grpc, grpc_controller_pb2, grpc_controller_pb2_grpc, plugin_pb2,
                                 plugin_pb2_grpc)
from scorekit_sdk._serve import COOKIE_KEY, COOKIE_VALUE, Plugin
from scorekit_sdk.testing import (ConfigError, ContractError, InfoError, JudgeFunc, LoadError, ScorerTest,
                                  check_contract, check_loads, normalize_run)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EXAMPLE = os.path.join(REPO, "examples", "python-scorer", "word_budget.py")


def make(name="probe", **info):
    """A scorer class whose score() returns what fn(run) gives."""

    def decorate(fn):
        class S(Scorer):
            def info(self):
                return Info(name=name, version="0.0.1", description="test", **{"threshold": 0.5, **info})

            def score(self, call):
                return fn(call.run)

        return S

    return decorate


# --- the contract's JSON ------------------------------------------------------------------


def test_info_json_leaves_out_what_is_empty():
    info = Info(name="x", version="1", description="d", threshold=0.5)
    assert info.to_json() == {"name": "x", "version": "1", "abi_version": 1, "description": "d",
                              "range": {"min": 0.0, "max": 1.0}, "threshold": 0.5}
    full = Info(name="x", version="1", description="d", threshold=0.5, range=Range(1, 5), decimals=3,
                dimensions=[Dimension("a", 2, "about a")], config_schema={"type": "object"}, defaults={},
                capabilities=[CAP_JUDGE]).to_json()
    assert full["dimensions"] == [{"name": "a", "weight": 2, "description": "about a"}]
    assert full["capabilities"] == ["judge"] and full["defaults"] == {} and full["decimals"] == 3


def test_result_json_round_trips():
    res = scored(0.5, "why", dimensions={"a": 0.5}, flags=["f"], steps=[Step("judge", prompt="p", output={"k": 1})])
    doc = res.to_json()
    assert doc["telemetry"] == {"duration_ms": 0} and "error" not in doc and "passed" not in doc
    assert Result.from_json(json.loads(json.dumps(doc))).to_json() == doc
    f = failed("judge_error", "no answer").to_json()
    assert f["error"] == {"code": "judge_error", "message": "no answer"} and "score" not in f


# --- the host's pipeline, in-process ------------------------------------------------------


def test_a_native_range_is_normalized_and_recorded():
    S = make(range=Range(1, 5), threshold=0.7)(lambda run: scored(4, "four of five"))
    res = ScorerTest(S).score({"input": "q", "output": "a"})
    assert res.score == 0.75 and res.passed is True
    assert res.adjustments == [{"rule": "normalize_range", "target": "score", "from": 4.0, "to": 0.75}]


def test_a_score_outside_the_range_is_failed_invalid_result_never_clamped():
    res = ScorerTest(make()(lambda run: scored(2))).score({"output": "a"})
    assert res.status == "failed" and res.error_code == "invalid_result" and res.score is None
    assert "score is 2.0, outside its declared range [0, 1]" in res.error_message


def test_dimensions_make_the_overall_score_by_their_weights():
    S = make(dimensions=[Dimension("a", 3), Dimension("b", 1)])(lambda run: scored(0.1, dimensions={"a": 1, "b": 0}))
    res = ScorerTest(S).score({"output": "x"})
    assert res.score == 0.75 and res.dimensions == {"a": 1, "b": 0}
    assert res.adjustments[-1]["rule"] == "overall_weighted"


def test_dimensions_are_checked_against_the_info():
    S = make(dimensions=[Dimension("a", 1)])(lambda run: scored(1, dimensions={"a": 1, "z": 1}))
    assert 'dimension \'z\' is not declared' in ScorerTest(S).score({"output": "x"}).error_message
    S = make(dimensions=[Dimension("a", 1), Dimension("b", 1)])(lambda run: scored(1, dimensions={"a": 1}))
    assert "missing declared dimension 'b'" in ScorerTest(S).score({"output": "x"}).error_message
    S = make(dimensions=[Dimension("a", 1)])(lambda run: scored(1, skipped_dimensions={"a": "no evidence"}))
    res = ScorerTest(S).score({"output": "x"})
    assert res.status == "skipped" and res.reason == "no weighted dimension could be judged (a: no evidence)"


def test_rounding_is_the_hosts():
    # 0.35*0.2 + 0.65*0.9 is 0.655 to a person and 0.6549999... as a float: 0.66.
    S = make(dimensions=[Dimension("a", 0.35), Dimension("b", 0.65)])(lambda run: scored(0, dimensions={"a": 0.2, "b": 0.9}))
    assert ScorerTest(S).score({"output": "x"}).score == 0.66
    assert ScorerTest(make(decimals=3)(lambda run: scored(1 / 3))).score({"output": "x"}).score == 0.333
    assert ScorerTest(make()(lambda run: scored(0.5)), scale=10).score({"output": "x"}).score == 5


def test_range_config_sets_the_scale_from_the_config():
    S = make(range_config="/scale", config_schema={"type": "object", "properties": {"scale": {"type": "object"}}})(
        lambda run: scored(50))
    assert ScorerTest(S, config={"scale": {"min": 0, "max": 100}}).score({"output": "x"}).score == 0.5


@pytest.mark.parametrize("fn, code, message", [
    (lambda run: 1 / 0, "scorer_error", "ZeroDivisionError: division by zero"),
    (lambda run: (_ for _ in ()).throw(ScorerError("invalid_run", "no passage")), "invalid_run", "no passage"),
    (lambda run: scored(math.nan), "invalid_result", "score is nan"),
    (lambda run: None, "invalid_result", "returned NoneType; return a Result"),
    (lambda run: Result(status="maybe"), "invalid_result", "unknown status 'maybe'"),
    (lambda run: failed("made_up", "odd"), "invalid_result", "'made_up' is not one of"),
])
def test_what_goes_wrong_is_failed_with_the_reason_never_0(fn, code, message):
    res = ScorerTest(make()(fn)).score({"output": "x"})
    assert res.status == "failed" and res.score is None and res.passed is None
    assert res.error_code == code and message in res.error_message


def test_configs_are_checked_merged_and_refused_as_the_host_does():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}, "m": {"type": "string"}}}
    seen = []

    class S(Scorer):
        def info(self):
            return Info(name="cfg", version="1", description="d", threshold=0.5, config_schema=schema, defaults={"n": 3, "m": "x"})

        def configure(self, config):
            if config["m"] == "refuse":
                raise ValueError("m may not be refuse; pick another")
            seen.append(config)

        def score(self, call):
            return scored(1)

    ScorerTest(S, config={"m": "y"})
    assert seen == [{"n": 3, "m": "y"}]
    with pytest.raises(ConfigError, match=r"config: n: 0 is less than the minimum of 1"):
        ScorerTest(S, config={"n": 0})
    with pytest.raises(ConfigError, match=r"unknown field 'nn' \(known: m, n\)"):
        ScorerTest(S, config={"nn": 2})
    with pytest.raises(ConfigError, match="m may not be refuse; pick another"):
        ScorerTest(S, config={"m": "refuse"})
    with pytest.raises(ConfigError, match="takes no config"):
        ScorerTest(make()(lambda run: scored(1)), config={"x": 1})


@pytest.mark.parametrize("name, info, message", [
    ("Bad Name", {}, "name: 'Bad Name' does not match"),
    ("probe", {"threshold": 2}, "threshold 2: want a normalized score in [0, 1]"),
    ("probe", {"range": Range(1, 1)}, "range [1, 1] is empty"),
    ("probe", {"dimensions": [Dimension("a", 0)]}, "dimension weights sum to 0"),
    ("probe", {"config_schema": {"type": "nope"}}, "its config_schema does not compile"),
])
def test_an_info_the_host_refuses_is_refused(name, info, message):
    S = make(name, **info)(lambda run: scored(1))
    with pytest.raises(InfoError) as e:
        ScorerTest(S)
    assert message in str(e.value)


def test_runs_are_read_in_every_shape_a_dataset_takes():
    run = normalize_run({
        "id": 42,
        "input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "text", "text": "Weather?"}]}],
        "output": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                         "function": {"name": "weather", "arguments": {"city": "Paris"}}}]},
                   {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
                   {"role": "assistant", "content": "It is sunny."}],
        "context": ["first", {"id": 7, "text": "second"}, {"text": "third"}],
    })
    assert run["id"] == "42" and run["input"] == "Weather?" and run["output"] == "It is sunny."
    assert run["conversation"][0]["content"] == "Be brief."
    assert run["tool_calls"] == [{"id": "c1", "name": "weather", "arguments": '{"city":"Paris"}', "result": "sunny"}]
    assert [p["id"] for p in run["context"]] == ["1", "7", "3"]
    # The scorer sees the normalized run.
    S = make()(lambda r: scored(1, f"{r.input}|{r.tool_calls[0].result}|{r.context[1].id}|{r.conversation[0].role}"))
    res = ScorerTest(S).score({"input": [{"role": "user", "content": "Hi"}], "output": [
        {"role": "assistant", "tool_calls": [{"name": "t"}]}, {"role": "tool", "content": "done"}], "context": ["a", "b"]})
    assert res.reason == "Hi|done|2|user"
    with pytest.raises(ScorerError, match='missing required field "output"'):
        normalize_run({"input": "q"})


# --- the contract check -------------------------------------------------------------------


def test_check_contract_lists_every_breach():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}

    class Careless(Scorer):
        def info(self):
            return Info(name="careless", version="1", description="d", threshold=0.5, config_schema=schema, defaults={"n": "three"})

        def score(self, call):
            if call.run.output == "skip":
                return skipped("")
            return scored(len(call.run.output))

    with pytest.raises(ContractError) as e:
        check_contract(Careless, runs=[{"output": "ab"}, {"output": "skip"}], configs=[{"n": 1}], bad_configs=[{"n": 2}])
    problems = "\n".join(e.value.problems)
    assert "its defaults do not satisfy its own config_schema" in problems
    assert "score is 2.0, outside its declared range [0, 1]" in problems
    assert "skipped without a reason" in problems
    assert 'config {"n": 2} was taken' in problems


# --- the plugin, driven over gRPC as the host drives it -----------------------------------


def test_plugin_serves_the_protocol(tmp_path):
    judge_scorer = tmp_path / "echo_judge.py"
    judge_scorer.write_text(textwrap.dedent('''\
        from scorekit_sdk import CAP_JUDGE, Info, Scorer, scored, serve

        class Echo(Scorer):
            def info(self):
                return Info(name="echo_judge", version="1", description="d", threshold=0.5, capabilities=[CAP_JUDGE])

            def score(self, call):
                return scored(1, call.judge.ask("hello " + call.run.output, json=False).content)

        serve(Echo)
        '''))
    env = {**os.environ, COOKIE_KEY: COOKIE_VALUE, "PLUGIN_UNIX_SOCKET_DIR": str(tmp_path), "PLUGIN_PROTOCOL_VERSIONS": "1"}
    proc = subprocess.Popen([sys.executable, str(judge_scorer)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        core, app, network, address, protocol = line.split("|")
        assert (core, app, network, protocol) == ("1", "1", "unix", "grpc") and address.startswith(str(tmp_path))
        channel = grpc.insecure_channel("unix:" + address)
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service="plugin"), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        scorer = plugin_pb2_grpc.ScorerStub(channel)
        info = scorer.Info(plugin_pb2.InfoRequest(), timeout=5)
        assert info.session and json.loads(info.infos_json)[0]["capabilities"] == ["judge"]
        assert scorer.Configure(plugin_pb2.ConfigureRequest(scorer="nope"), timeout=5).error.code == "invalid_config"
        instance = scorer.Configure(plugin_pb2.ConfigureRequest(scorer="echo_judge", config_json=b"{}"), timeout=5).instance

        # The Session: a call, the plugin's judge request on the stream, the host's answer.
        sent = []

        def host():
            yield plugin_pb2.HostMessage(score=plugin_pb2.ScoreRequest(instance=instance, run_json=b'{"output": "world"}', session_judge=True))
            while len(sent) < 1:
                time.sleep(0.01)
            reqs = json.loads(sent[0].complete.requests_json)
            answer = [{"content": "verdict on " + reqs[0]["messages"][-1]["content"]}]
            yield plugin_pb2.HostMessage(complete=plugin_pb2.CompleteResponse(responses_json=json.dumps(answer).encode()))
            while len(sent) < 2:
                time.sleep(0.01)

        for msg in scorer.Session(host(), timeout=10):
            sent.append(msg)
            if msg.WhichOneof("msg") == "score":
                break
        assert [m.WhichOneof("msg") for m in sent] == ["complete", "score"]
        assert json.loads(sent[1].score.result_json)["reason"] == "verdict on hello world"

        # A unary call without a judge: the scorer's exception is the call's error.
        resp = scorer.Score(plugin_pb2.ScoreRequest(instance=instance, run_json=b'{"output": "x"}'), timeout=5)
        assert resp.error.code == "scorer_error" and "AttributeError" in resp.error.message
        assert scorer.Score(plugin_pb2.ScoreRequest(instance=99, run_json=b"{}"), timeout=5).error.code == "unavailable"
        for bad in (b"[1]", b"{not json"):
            assert scorer.Score(plugin_pb2.ScoreRequest(instance=instance, run_json=bad), timeout=5).error.code == "invalid_run"

        grpc_controller_pb2_grpc.GRPCControllerStub(channel).Shutdown(grpc_controller_pb2.Empty(), timeout=5)
        assert proc.wait(timeout=10) == 0
        logs = [json.loads(line) for line in proc.stderr.read().splitlines()]
        assert {"@level": "info", "@message": "serving"}.items() <= logs[0].items() and logs[0]["scorers"] == ["echo_judge"]
        assert any(l["@message"] == "scorer raised" and "AttributeError" in l["error"] for l in logs)
    finally:
        proc.kill()


def test_run_by_hand_it_says_it_is_a_plugin():
    env = {k: v for k, v in os.environ.items() if k != COOKIE_KEY}
    out = subprocess.run([sys.executable, EXAMPLE], env=env, capture_output=True, text=True)
    assert out.returncode == 1 and "This program is a scorekit plugin" in out.stderr and "python3 -m scorekit_sdk check" in out.stderr


def test_a_plugin_with_two_scorers_of_one_name_is_refused():
    S = make("twice")(lambda run: scored(1))
    with pytest.raises(ValueError, match="registered twice"):
        Plugin([S, S])


# --- a real host --------------------------------------------------------------------------


def scorekit_bin():
    exe = os.environ.get("SCOREKIT_BIN")
    assert exe, "SCOREKIT_BIN is not set: run these tests with go test ./internal/pythontest, or set it to a scorekit binary"
    return exe


def test_check_loads_the_example_in_a_real_host(tmp_path):
    manifest, names = check_loads(EXAMPLE, scorekit=scorekit_bin(), out=str(tmp_path / "plugins" / "wb.plugin.json"))
    assert names == ["word_budget"]
    doc = json.load(open(manifest))
    assert doc["env"]["PYTHONPATH"] and doc["read"] and doc["runtime"] == "process"
    out = subprocess.run([scorekit_bin(), "score", "--plugins", str(tmp_path / "plugins"), "--scorers", "word_budget",
                          "--format", "jsonl", "-"], input='{"input": "q", "output": "two words"}', capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = json.loads(out.stdout)
    assert (line["scorer"], line["score"], line["reason"], line["telemetry"]["runtime"]) == ("word_budget", 1, "2 words for a budget of 100", "process")


def test_check_loads_says_why_a_plugin_does_not_load(tmp_path):
    tmp_path.chmod(0o755)  # the sandbox runs the plugin as another user, who must reach its folder
    broken = tmp_path / "broken.py"
    broken.write_text("#!/usr/bin/env python3\nimport no_such_module\n")
    with pytest.raises(LoadError, match="not executable"):
        check_loads(str(broken), scorekit=scorekit_bin())
    broken.chmod(0o755)
    with pytest.raises(LoadError, match="the plugin process exited at start"):
        check_loads(str(broken), scorekit=scorekit_bin())
    cli = subprocess.run([sys.executable, "-m", "scorekit_sdk", "check", "--scorekit", scorekit_bin(), str(broken)],
                         capture_output=True, text=True)
    assert cli.returncode == 1 and "does not load" in cli.stderr
