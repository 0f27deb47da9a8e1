"""The pytest gate (the `scorekit` fixture), run in pytest sessions of its own (pytester):
locally through this checkout's scorekit command, with built-in scorers and a Python plugin,
and against the real scorekit serve of conftest.py. A missed threshold fails the test with
the scorer's reason, in the terminal and in --junitxml's report, which also carries each
scorer's figures as the test's properties."""

import os
import xml.etree.ElementTree as ET

import pytest

from conftest import JUDGE_FAULT, scorekit_bin

pytest_plugins = ["pytester"]

CAPITALS = '''
RUNS = [
    {"id": "fr", "input": "Capital of France?", "output": "Paris", "expected": "Paris"},
    {"id": "it", "input": "Capital of Italy?", "output": "Rome", "expected": "Rome"},
    {"id": "es", "input": "Capital of Spain?", "output": "Barcelona", "expected": "Madrid"},
]
'''


def run_gate(pytester, body, *args):
    pytester.makepyfile(test_agent=CAPITALS + body)
    report = pytester.path / "report.xml"
    result = pytester.runpytest_subprocess("--junitxml", str(report), "--scorekit-bin", scorekit_bin(), *args)
    return result, ET.parse(report).getroot()


def cases(root):
    return {c.get("name"): c for c in root.iter("testcase")}


def properties(case):
    return {p.get("name"): p.get("value") for p in case.iter("property")}


def test_a_gate_that_holds_passes_and_records_the_figures(pytester):
    result, root = run_gate(pytester, '''
def test_right_answers(scorekit):
    report = scorekit.check(RUNS[:2], scorers=["exact_match", "prescreen"])
    assert report["exact_match"].mean == 1 and report["exact_match"].scored == 2
''')
    result.assert_outcomes(passed=1)
    props = properties(cases(root)["test_right_answers"])
    assert props["scorekit.exact_match.mean"] == "1.0" and props["scorekit.exact_match.pass_rate"] == "1.0"
    assert props["scorekit.prescreen.scored"] == "2" and props["scorekit.exact_match.failed"] == "0"


def test_a_run_under_the_scorers_threshold_fails_the_test_with_its_reason(pytester):
    result, root = run_gate(pytester, '''
def test_all_answers(scorekit):
    scorekit.check(RUNS, scorers=["exact_match"])
''')
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*scorekit gate FAILED:*", "*exact_match: 1 of 3 scored runs missed the scorer's threshold:*",
                                 "*run 3 (id es): score 0.00: *"])
    failure = cases(root)["test_all_answers"].find("failure")
    assert failure is not None and "exact_match: 1 of 3 scored runs missed" in failure.get("message")
    assert "run 3 (id es)" in failure.text


def test_fail_under_gates_the_mean_as_the_command_line_does(pytester):
    result, root = run_gate(pytester, '''
def test_mean(scorekit):
    scorekit.check(RUNS, scorers=["exact_match"], fail_under={"exact_match": 0.9})

def test_mean_that_holds(scorekit):
    scorekit.check(RUNS, scorers=["exact_match"], fail_under={"exact_match": 0.6})
''')
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*exact_match: mean 0.67 over 3 scored results < 0.90; lowest:*", "*run 3 (id es): score 0.00*"])


def test_a_python_plugin_gates_with_its_config(pytester):
    plugins = os.environ.get("SCOREKIT_TEST_PLUGINS")
    assert plugins, "SCOREKIT_TEST_PLUGINS is not set: the Go test that runs these writes the Python example's manifest there"
    result, root = run_gate(pytester, '''
def test_short_answers(scorekit):
    runs = [{"input": "Capital of France?", "output": "It is Paris, the capital and largest city of France."}]
    scorekit.check(runs, scorers=["word_budget"], config={"word_budget": {"max_words": 5}})
''', "--scorekit-plugins", plugins)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*word_budget: 1 of 1 scored runs missed the scorer's threshold:*",
                                 "*run 1: score 0.00: 10 words for a budget of 5*"])


def test_a_mistake_in_the_check_says_what_to_fix(pytester):
    result, _ = run_gate(pytester, '''
def test_unscored_gate(scorekit):
    scorekit.check(RUNS, scorers=["exact_match"], fail_under={"prescreen": 0.5})

def test_unknown_scorer(scorekit):
    scorekit.check(RUNS, scorers=["no_such_scorer"])
''')
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*fail_under names prescreen, which the check does not score; add it to scorers*",
                                 '*unknown scorer "no_such_scorer"*'])


def test_against_a_service_a_scorer_that_could_not_judge_fails_the_gate_never_0(pytester, svc, monkeypatch):
    pytester.makepyfile(test_agent=f'''
def test_judged(scorekit):
    runs = [{{"input": "What is the capital of France?", "output": "Paris"}},
            {{"input": "{JUDGE_FAULT}: grade me", "output": "fine"}}]
    scorekit.check(runs, scorers=["relevancy"])

def test_stored_and_evaluated(scorekit):
    runs = [{{"id": "gate-1", "input": "What is the capital of France?", "output": "Paris"}}]
    report = scorekit.check(runs, scorers=["relevancy", "prescreen"], agent="gated-agent")
    assert report["relevancy"].mean == 0.9
''')
    monkeypatch.setenv("SCOREKIT_KEY", svc.key)
    result = pytester.runpytest_subprocess("--scorekit-url", svc.url)
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(["*1 result(s) failed (at most 0 allowed); a scorer that could not judge is not a pass:*",
                                 "*relevancy run 2: failed judge_error: *"])
    assert any(r["id"] == "gate-1" for r in svc.client().list_runs("gated-agent")["runs"])
