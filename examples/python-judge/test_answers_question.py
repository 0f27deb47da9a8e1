"""answers_question's tests, in-process, with a scripted judge standing in for the LLM."""

import json

from scorekit_sdk.testing import JudgeFunc, ScorerTest, check_contract

from answers_question import AnswersQuestion

RUN = {"input": "What is the capital of France?", "output": "Paris.", "metadata": {"purpose": "a geography tutor"}}


def verdict(score, reasoning="It answers."):
    return lambda request: json.dumps({"score": score, "reasoning": reasoning})


def test_the_judges_verdict_is_the_score():
    judge = JudgeFunc(verdict(0.9, "It names the capital."))
    res = ScorerTest(AnswersQuestion, judge=judge).score(RUN)
    assert res.status == "scored" and res.score == 0.9 and res.passed
    assert res.reason == "It names the capital."
    prompt = judge.requests[0].last_user()
    assert "<question>\nWhat is the capital of France?\n</question>" in prompt
    assert "The agent's purpose: a geography tutor" in prompt
    assert judge.requests[0].schema["required"] == ["score", "reasoning"]
    assert res.steps[0].prompt == prompt


def test_a_judge_that_answers_prose_fails_the_call_with_its_words_never_0():
    res = ScorerTest(AnswersQuestion, judge=JudgeFunc(lambda r: "I would rather not.")).score(RUN)
    assert res.status == "failed" and res.score is None
    assert res.error_code == "judge_error" and "I would rather not." in res.error_message


def test_a_score_off_the_scale_fails():
    res = ScorerTest(AnswersQuestion, judge=JudgeFunc(verdict(7))).score(RUN)
    assert res.status == "failed" and "not a number from 0 to 1" in res.error_message


def test_a_failed_request_fails_the_call_with_the_hosts_reason():
    def spent(request):
        raise RuntimeError("token budget spent")
    res = ScorerTest(AnswersQuestion, judge=JudgeFunc(spent)).score(RUN)
    assert res.status == "failed" and res.error_code == "judge_error" and "token budget spent" in res.error_message


def test_without_a_judge_it_is_skipped_with_how_to_configure_one():
    res = ScorerTest(AnswersQuestion).score(RUN)
    assert res.status == "skipped" and "--judge-url" in res.reason


def test_it_keeps_the_contract():
    check_contract(AnswersQuestion, runs=[RUN, {"input": "", "output": "x"}], judge=JudgeFunc(verdict(0.4)))
