"""The client against a real scorekit serve (conftest.py): every operation group of the
TypeScript client (scoring, runs and evaluations with their results, insights, scorers and
publishing, labels and agreement, policies and the judge's keys, deletion and export), and
the service's problem details as ScorekitError."""

import json
import os
import re
import subprocess
import sys
import tempfile
import typing

import pytest

from conftest import JUDGE_FAULT, JUDGE_SCORE, REPO, Judge, jsonl
from scorekit_client import OPERATIONS, ScorekitClient, ScorekitError, fixed
from scorekit_client import types as T
from scorekit_client.client import ScorekitClient as _Client


def rejects(call, *args, **kwargs) -> ScorekitError:
    with pytest.raises(ScorekitError) as e:
        call(*args, **kwargs)
    return e.value


# --- scoring ------------------------------------------------------------------------------


def test_a_correct_short_answer_scores_high_with_prescreen(client):
    result = client.score({"scorer": "prescreen", "run": {"input": "What is the capital of France?", "output": "Paris"}})
    assert result["status"] == "scored" and result["score"] >= 0.8 and result["passed"] is True


def test_an_empty_answer_is_flagged_and_does_not_pass(client):
    result = client.score({"scorer": "prescreen", "run": {"input": "What is the capital of France?", "output": ""}})
    assert result["status"] == "scored" and result["passed"] is False and "empty_output" in result["flags"]


def test_a_judge_scorer_reaches_the_judge_through_the_service(client):
    result = client.score({"scorer": "relevancy", "run": {"input": "What is the capital of France?", "output": "Paris"}})
    assert result["status"] == "scored" and result["score"] == JUDGE_SCORE and result["telemetry"]["judge_calls"] == 1


def test_a_scorer_that_does_not_apply_is_skipped_with_its_reason_not_0(client):
    result = client.score({"scorer": "contextprecision", "run": {"input": "What is the capital of France?", "output": "Paris"}})
    assert result["status"] == "skipped" and "score" not in result and "context" in result["reason"]


# --- problem details ----------------------------------------------------------------------


def test_an_unknown_scorer_is_404_unknown_scorer_naming_the_known_ones(client):
    err = rejects(client.score, {"scorer": "no-such-scorer", "run": {"input": "q", "output": "a"}})
    assert (err.status, err.code) == (404, "unknown_scorer")
    assert "no-such-scorer" in err.detail and "prescreen" in err.detail and err.problem["code"] == "unknown_scorer"


def test_a_bad_key_and_no_key_are_401_unauthorized(svc):
    err = rejects(svc.client("sk_not-a-key").score, {"scorer": "prescreen", "run": {"input": "q", "output": "a"}})
    assert (err.status, err.code) == (401, "unauthorized") and err.detail
    err = rejects(ScorekitClient(svc.url).list_scorers)
    assert (err.status, err.code) == (401, "unauthorized")


def test_a_limit_of_0_is_400_invalid_request_saying_the_range(client):
    err = rejects(client.create_evaluation, "assistant", {"limit": 0})
    assert (err.status, err.code) == (400, "invalid_request") and "limit" in err.detail


def test_an_unknown_evaluation_is_404_not_found(client):
    err = rejects(client.get_evaluation, "ev_doesnotexist")
    assert (err.status, err.code) == (404, "not_found")


def test_a_server_that_is_not_scorekit_is_bad_response(svc):
    err = rejects(ScorekitClient(svc.judge_url, api_key=svc.key).list_scorers)
    assert (err.code, err.status) == ("bad_response", 404) and "without a problem document" in err.detail


def test_a_service_that_is_not_there_is_unreachable_with_the_url():
    err = rejects(ScorekitClient("http://127.0.0.1:1").list_scorers)
    assert (err.status, err.code) == (0, "unreachable") and "127.0.0.1:1" in err.detail


# --- scopes and the tenant's judge key ----------------------------------------------------


def test_a_read_key_reads_and_is_refused_a_change_with_403(svc):
    reader = svc.client(svc.cli("keys", "create", "--tenant", "acme", "--scope", "read").strip())
    assert isinstance(reader.list_scorers(), list)
    err = rejects(reader.put_policy, "assistant", {"scorers": ["prescreen"], "sample_rate": 1})
    assert (err.status, err.code) == (403, "insufficient_scope") and "needs a key with scope admin" in err.detail


def test_a_stored_judge_key_is_used_for_the_tenants_calls_and_never_returned(svc, client):
    secret = "sk-py-tenant-4b2e77"
    client.set_judge_key("default", secret)
    main = next(e for e in client.list_judge_endpoints() if e["name"] == "default")
    assert main["key"]["stored"] is True and main["model"] == "test-judge"
    assert secret not in json.dumps(client.list_judge_endpoints())
    before = len(Judge.auth)
    result = client.score({"scorer": "relevancy", "run": {"input": "Which key is this?", "output": "The tenant's."}})
    assert result["status"] == "scored" and Judge.auth[before:] == [f"Bearer {secret}"]
    client.delete_judge_key("default")
    assert rejects(client.delete_judge_key, "default").code == "not_found"
    assert secret not in svc.log()


# --- runs and evaluations -----------------------------------------------------------------


RUNS = [json.loads(l) for l in jsonl("examples/service/assistant.jsonl").strip().splitlines()]


def test_import_stores_runs_once_and_evaluating_the_last_10_scores_the_10_newest(client):
    first = client.import_runs(RUNS)
    assert (first["stored"], first["rejected"]) == (len(RUNS), 0)
    again = client.import_runs(RUNS)
    assert (again["stored"], again["duplicates"]) == (0, len(RUNS))
    newest = [str(r["id"]) for r in sorted(RUNS, key=lambda r: r["time"], reverse=True)[:10]]
    assert [r["id"] for r in client.list_runs("assistant", limit=10)["runs"]] == newest

    ev = client.evaluate("assistant", {"limit": 10, "scorers": ["prescreen"]}, timeout=60)
    assert (ev["status"], ev["agent"], ev["runs"], ev["done_results"]) == ("done", "assistant", 10, 10)
    assert {r["run_id"] for r in ev["results"]} == set(newest)
    for r in ev["results"]:
        assert r["scorer"] == "prescreen" and r["scorer_version"]
        assert isinstance(r["score"], (int, float)) if r["status"] == "scored" else r["score"] is None
    summary = next(s for s in ev["scorers"] if s["name"] == "prescreen")
    assert summary["scored"] + summary["skipped"] + summary["failed"] == 10 and summary["pending"] == 0
    stored = client.get_run(newest[0])
    assert stored["agent"] == "assistant" and any(r["evaluation_id"] == ev["id"] for r in stored["results"])
    assert any(e["id"] == ev["id"] for e in client.list_evaluations("assistant"))


def test_jsonl_import_keeps_the_good_lines_and_rejects_a_bad_one_with_its_line(client):
    text = "\n".join([json.dumps({"id": "jsonl-1", "input": "What is 2+2?", "output": "4", "time": "2025-07-01T10:00:00Z"}),
                      "{not json",
                      json.dumps({"id": "jsonl-3", "input": "Capital of Italy?", "output": "Rome", "time": "2025-07-01T10:01:00Z"})])
    res = client.import_runs(text, agent="jsonl-agent")
    assert (res["stored"], res["rejected"]) == (2, 1)
    bad = next(r for r in res["runs"] if r["status"] == "rejected")
    assert bad["line"] == 2 and bad["error"]


def test_an_evaluation_of_a_judge_scorer_that_fails_keeps_the_failure_never_0(client):
    client.import_runs([{"id": "fault-1", "input": f"{JUDGE_FAULT}: grade me", "output": "fine", "time": "2025-08-01T00:00:00Z"}], agent="faulty")
    ev = client.evaluate("faulty", {"limit": 1, "scorers": ["relevancy"]}, timeout=90)
    r = ev["results"][0]
    assert (r["status"], r["score"], r["error"]["code"]) == ("failed", None, "judge_error")
    summary = next(s for s in ev["scorers"] if s["name"] == "relevancy")
    assert summary["failed"] == 1 and summary["mean"] is None


def test_wait_for_evaluation_gives_up_with_wait_timeout(client):
    client.import_runs([{"id": "slow-1", "input": f"{JUDGE_FAULT} again", "output": "x", "time": "2025-08-02T00:00:00Z"}], agent="slow")
    started = client.create_evaluation("slow", {"limit": 1, "scorers": ["relevancy"]})
    err = rejects(client.wait_for_evaluation, started["id"], timeout=0.001)
    assert err.code == "wait_timeout" and started["id"] in err.detail


def test_an_on_arrival_policy_evaluates_imported_runs(client):
    policy = client.put_policy("arrivals", {"scorers": ["prescreen"], "sample_rate": 1})
    assert policy["scorers"] == ["prescreen"] and client.get_policy("arrivals")["sample_rate"] == 1
    res = client.import_runs([{"id": f"arrival-{i}", "input": f"What is {i} + {i}?", "output": str(2 * i), "time": f"2025-09-0{i}T00:00:00Z"}
                              for i in (1, 2, 3)], agent="arrivals")
    assert len(res["evaluations"]) == 1
    ev = client.wait_for_evaluation(res["evaluations"][0], results=False, timeout=60)
    assert (ev["trigger"], ev["runs"], ev.get("results"), ev["scorers"][0]["scored"]) == ("arrival", 3, None, 3)
    client.delete_policy("arrivals")
    assert rejects(client.get_policy, "arrivals").code == "not_found"
    assert not client.import_runs([{"id": "arrival-4", "input": "What is 4 + 4?", "output": "8"}], agent="arrivals").get("evaluations")


def test_a_tenant_over_its_request_rate_gets_429_with_retry_after(svc):
    with tempfile.TemporaryDirectory() as d:
        policy = os.path.join(d, "policy.json")
        with open(policy, "w") as f:
            json.dump({"requests_per_second": 0.1}, f)
        svc.cli("tenants", "create", "slow", "--policy", policy)
    slow = svc.client(svc.cli("keys", "create", "--tenant", "slow").strip())
    limited = None
    for _ in range(20):
        try:
            slow.list_scorers()
        except ScorekitError as e:
            limited = e
            break
    assert limited is not None, "20 requests at 0.1 per second were all answered"
    assert (limited.status, limited.code) == (429, "rate_limited") and limited.retry_after > 0


def test_scorers_and_agents_are_listed(client):
    assert any(s["name"] == "prescreen" and s["range"]["max"] == 1 for s in client.list_scorers())
    assert any(a["name"] == "assistant" and a["runs"] == len(RUNS) for a in client.list_agents()["agents"])


# --- published scorers --------------------------------------------------------------------


def test_publish_list_promote_roll_back_and_delete_a_configured_scorer(client):
    v1 = client.publish_scorer({"name": "order_json", "base": "json_valid", "config": {"schema": {"type": "object", "required": ["order"]}}})
    assert (v1["ref"], v1["kind"], v1["promoted"]) == ("order_json@1", "configured", True) and v1["digest"].startswith("sha256:")
    v2 = client.publish_scorer({"name": "order_json", "base": "json_valid", "config": {"schema": {"type": "object", "required": ["order", "total"]}}})
    assert (v2["version"], v2["promoted"]) == (2, False) and v2["digest"] != v1["digest"]
    assert client.promote_scorer("order_json", 2)["promoted"] is True
    assert [(v["version"], v["promoted"]) for v in client.list_scorer_versions("order_json")] == [(1, False), (2, True)]
    client.promote_scorer("order_json", 1)
    assert client.get_scorer_version("order_json", 1)["promoted"] is True
    client.delete_scorer_version("order_json", 2)
    assert client.get_scorer_version("order_json", 2)["deleted"] is True
    mine = next(s for s in client.list_scorers() if s["name"] == "order_json")
    assert (mine["source"], mine["promoted"]) == ("tenant", 1)


def test_a_refused_publish_is_422_scorer_refused_with_what_to_fix(client):
    err = rejects(client.publish_scorer, {"name": "not_wasm"}, module=b"#!/bin/sh\n")
    assert (err.status, err.code) == (422, "scorer_refused") and "not a WebAssembly module" in err.detail


def test_under_the_agreement_gate_a_worse_version_is_409_and_an_override_promotes_it(svc):
    with tempfile.TemporaryDirectory() as d:
        policy = os.path.join(d, "policy.json")
        with open(policy, "w") as f:
            json.dump({"promotion_gate": True}, f)
        svc.cli("tenants", "create", "gated", "--policy", policy)
    c = svc.client(svc.cli("keys", "create", "--tenant", "gated").strip())
    outputs = ["Paris", "paris", "Rome"]
    runs = [{"id": f"g{i}", "agent": "geo", "input": "capital of France?", "output": outputs[i % 3], "expected": "Paris",
             "time": f"2026-01-01T00:{i:02d}:00Z"} for i in range(33)]
    c.import_runs(runs)
    c.publish_scorer({"name": "matcher", "base": "exact_match", "config": {"ignore_case": True}})
    c.publish_scorer({"name": "matcher", "base": "exact_match", "config": {"ignore_case": False}})
    assert c.evaluate("geo", {"limit": 33, "scorers": ["matcher@1", "matcher@2"]})["status"] == "done"
    for i, r in enumerate(runs):
        c.put_label(r["id"], "matcher", {"labeller": "ana", "passed": i % 3 != 2})
    err = rejects(c.promote_scorer, "matcher", 2)
    assert (err.status, err.code) == (409, "agreement_gate") and "matcher@1 (current) kappa 1.000" in err.detail
    v = c.promote_scorer("matcher", 2, override="the labels predate the policy")
    assert v["promoted"] is True and v["gate"]["report"]["decision"] == "refuse"
    recorded = c.list_scorer_versions("matcher")[1]["promotions"][0]["gate"]
    assert recorded["override"]["reason"] == "the labels predate the policy" and recorded["report"]["runs"] == 33


# --- deletion and export ------------------------------------------------------------------


def test_a_deleted_run_stays_deleted_and_the_export_and_audit_log_show_it(client):
    gone = [{"id": "forget-1", "input": "My email is ann@example.com", "output": "Noted."}, {"id": "forget-2", "input": "q", "output": "a"}]
    client.import_runs(gone, agent="forgetful")
    assert client.delete_run("forget-1")["runs"] == 1
    again = client.import_runs(gone, agent="forgetful")
    assert again["deleted"] == 1 and next(r for r in again["runs"] if r["id"] == "forget-1")["status"] == "deleted"
    assert rejects(client.get_run, "forget-1").code == "not_found"
    kinds, kept = {}, False
    for line in client.export():
        kinds[line["kind"]] = kinds.get(line["kind"], 0) + 1
        if line["kind"] == "run":
            assert line["data"]["id"] != "forget-1"
            kept = kept or line["data"]["id"] == "forget-2"
    assert kept and kinds["end"] == 1 and kinds["tenant"] == 1
    log = client.audit_log(limit=10)
    assert [(e["action"], e["subject"]) for e in log[:2]] == [("export", "acme"), ("delete_run", "forget-1")]
    assert log[0]["actor"].startswith("key sk_")
    assert client.delete_agent("forgetful")["runs"] == 1


def test_a_tenant_deletes_itself_and_its_key_then_opens_nothing(svc):
    svc.cli("tenants", "create", "leaving")
    leaving = svc.client(svc.cli("keys", "create", "--tenant", "leaving").strip())
    leaving.import_runs([{"id": "l1", "input": "q", "output": "a"}], agent="bot")
    assert leaving.delete_tenant()["runs"] == 1
    assert rejects(leaving.list_agents).status == 401


# --- insights -----------------------------------------------------------------------------


def test_insights_none_on_good_runs_critical_ones_on_a_bad_deploy(client):
    client.import_runs(jsonl("examples/service/email-triage.jsonl"))
    client.evaluate("email-triage", {"limit": 270, "scorers": ["prescreen"]}, results=False, timeout=120)
    assert (client.list_insights(wait="30s").get("insights") or []) == []
    client.import_runs(jsonl("examples/service/email-triage-broken.jsonl"))
    client.evaluate("email-triage", {"limit": 100, "scorers": ["prescreen"]}, results=False, timeout=120)
    critical = client.list_insights(wait="30s", severity="critical")["insights"]
    gross = next(i for i in critical if i["kind"] == "gross_failures")
    assert (gross["agent"], gross["scorer"], gross["evidence"]["window"]["runs"]) == ("email-triage", "prescreen", 100)
    assert all(i["severity"] == "critical" for i in critical)
    by_agent = client.list_agent_insights("email-triage", severity="critical")["insights"]
    assert sorted(i["id"] for i in by_agent) == sorted(i["id"] for i in critical)
    one = client.get_insight(gross["id"])
    assert one["title"] == gross["title"] and one["evidence"] == gross["evidence"]
    raw = client.request("get-insight", path={"id": gross["id"]})
    assert one["evidence"]["window"]["mean"] == fixed(raw["evidence"]["window"]["mean"], 2)
    assert rejects(client.get_insight, "in_nosuchinsight").code == "not_found"


def test_an_evaluations_mean_and_pass_rate_are_the_command_lines(svc, client):
    runs = [{**json.loads(l), "agent": "seed"} for l in jsonl("examples/runs.jsonl").strip().splitlines()]
    client.import_runs(runs)
    ev = client.evaluate("seed", {"limit": len(runs), "scorers": ["prescreen"]}, timeout=60)
    summary = next(s for s in ev["scorers"] if s["name"] == "prescreen")
    out = subprocess.run([svc.bin, "score", os.path.join(REPO, "examples", "runs.jsonl")], capture_output=True, text=True).stdout
    row = next(l for l in out.splitlines() if l.startswith("prescreen ")).split()
    assert summary["mean"] == float(row[3]) and summary["pass_rate"] == float(row[4].rstrip("%")) / 100
    raw = client.request("get-evaluation", path={"id": ev["id"]}, query={"results": False})
    assert next(s for s in raw["scorers"] if s["name"] == "prescreen")["mean"] != summary["mean"], "the service sends more digits"


@pytest.mark.parametrize("x, digits, want", [
    (0.8099999999999999, 2, 0.81), (0.7125, 2, 0.71), (0.805, 2, 0.81), (0.125, 2, 0.12), (0.375, 2, 0.38), (62.5, 0, 62), (1, 2, 1),
])
def test_rounding_is_the_command_lines(x, digits, want):
    assert fixed(x, digits) == want


# --- labels and agreement -----------------------------------------------------------------


def test_labels_are_stored_listed_measured_against_the_scorer_and_removed(client):
    runs = [{"id": f"lab-{i}", "agent": "labelled", "input": f"What is {i} plus {i}?", "output": str(2 * i) if i % 2 == 0 else ""} for i in range(6)]
    client.import_runs(runs)
    ev = client.evaluate("labelled", {"limit": 6, "scorers": ["prescreen"]}, timeout=60)
    passed = {r["run_id"]: r["passed"] is True for r in ev["results"]}
    first = client.put_label("lab-0", "prescreen", {"labeller": "ana", "passed": passed["lab-0"], "note": "right"})
    assert (first["run_id"], first["note"]) == ("lab-0", "right")
    lines = [{"run_id": r["id"], "scorer": "prescreen", "labeller": "ana", "passed": (not passed[r["id"]]) if r["id"] == "lab-1" else passed[r["id"]]}
             for r in runs[1:]]
    lines.append({"run_id": "no-such-run", "scorer": "prescreen", "labeller": "ana", "passed": True})
    imported = client.import_labels(lines)
    assert (imported["stored"], imported["rejected"]) == (5, 1)
    bad = next(l for l in imported["lines"] if l["status"] == "rejected")
    assert bad["line"] == 6 and 'no run "no-such-run"' in bad["error"]
    page = client.list_labels(scorer="prescreen", limit=4)
    assert len(page["labels"]) == 4 and page["next"]
    rest = client.list_labels(scorer="prescreen", limit=4, cursor=page["next"])
    assert [l["run_id"] for l in rest["labels"]] == ["lab-4", "lab-5"]
    agreement = client.get_agreement("prescreen")
    assert agreement["pass_fail"]["runs"] == 6 and agreement["pass_fail"]["accuracy"]["value"] == 5 / 6
    assert [d["run_id"] for d in agreement["disagreements"]] == ["lab-1"] and agreement["not_scored"]["runs"] == 0
    client.import_runs([{"id": "lab-late", "agent": "labelled", "input": "What is 7 plus 7?", "output": "14"}])
    client.put_label("lab-late", "prescreen", {"labeller": "ana", "passed": True})
    assert client.get_agreement("prescreen")["not_scored"]["no_result"] == 1
    started = client.score_labelled("prescreen")
    assert started["runs"] == 1 and len(started["evaluations"]) == 1
    client.wait_for_evaluation(started["evaluations"][0], timeout=60)
    assert client.get_agreement("prescreen")["pass_fail"]["runs"] == 7
    client.delete_label("lab-1", "prescreen", "ana")
    assert client.list_run_labels("lab-1") == []
    assert client.get_agreement("prescreen")["pass_fail"]["accuracy"]["value"] == 1
    err = rejects(client.put_label, "lab-2", "prescreen", {"labeller": "ana", "passed": True, "score": 1})
    assert err.code == "invalid_request" and "exactly one of" in err.detail


# --- the client covers the API ------------------------------------------------------------


# Operations the client leaves to other senders: the health check and the OTLP endpoints
# (OpenTelemetry exporters send those), and the ingestion counters.
NOT_COVERED = {"healthz", "export-traces", "export-logs", "get-ingest"}


def test_every_operation_of_the_document_has_a_method():
    import inspect
    source = inspect.getsource(_Client)
    missing = [op for op in OPERATIONS if op not in NOT_COVERED and f'"{op}"' not in source]
    assert missing == [], f"operations of openapi.json without a client method: {missing}"


def test_the_types_resolve():
    for name in T.__all__:
        t = getattr(T, name)
        if isinstance(t, type):
            typing.get_type_hints(t)


def test_the_readme_shows_the_example_as_it_is_and_it_runs(svc):
    here = os.path.join(REPO, "clients", "python")
    with open(os.path.join(here, "examples", "score.py")) as f:
        example = f.read()
    with open(os.path.join(here, "README.md")) as f:
        assert "```python\n" + example + "```" in f.read(), "README.md's first example differs from examples/score.py: copy the file in"
    env = {**os.environ, "SCOREKIT_URL": svc.url, "SCOREKIT_KEY": svc.key}
    out = subprocess.run([sys.executable, os.path.join(here, "examples", "score.py")], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and re.match(r"scored (0\.[89]\d*|1) passed=True: ", out.stdout), out.stderr
    out = subprocess.run([sys.executable, os.path.join(here, "examples", "score.py")], env={**env, "SCOREKIT_KEY": "sk_wrong"},
                         capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr.startswith("unauthorized (HTTP 401): ")
