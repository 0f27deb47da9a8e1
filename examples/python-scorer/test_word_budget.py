"""word_budget's tests through the host's pipeline, in-process (scorekit_sdk.testing): the
config is checked against the schema, each result validated and normalized, and the tests
see what users will see."""

import pytest

from scorekit_sdk.testing import ConfigError, ScorerTest, check_contract

from word_budget import WordBudget


@pytest.mark.parametrize("output, status, score, passed", [
    ("Paris is the capital of France.", "scored", 1, True),   # within the budget
    ("word " * 15, "scored", 0.5, True),                      # half over
    ("word " * 20, "scored", 0, False),                       # twice the budget
    ("", "skipped", None, None),                              # empty output is skipped, not 0
])
def test_word_budget(output, status, score, passed):
    s = ScorerTest(WordBudget, config={"max_words": 10})
    res = s.score({"input": "What is the capital of France?", "output": output})
    assert res.status == status, res.reason
    assert res.score == score and res.passed == passed


def test_word_budget_rejects_a_bad_config():
    with pytest.raises(ConfigError, match="max_words"):
        ScorerTest(WordBudget, config={"max_words": 0})  # the schema says minimum 1


def test_word_budget_keeps_the_contract():
    check_contract(WordBudget, runs=[{"input": "q", "output": "a few words"}, {"input": "q", "output": ""}],
                   configs=[None, {"max_words": 1}], bad_configs=[{"max_words": "ten"}, {"max_word": 10}])
