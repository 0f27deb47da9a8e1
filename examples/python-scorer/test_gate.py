"""A gate on an agent's answers, as a CI job runs it: the scorekit fixture scores the runs
the test makes with word_budget (the plugin next to this file) and fails the test with the
scorer's reasons when they miss its threshold."""

ANSWERS = {
    "What is the capital of France?": "Paris.",
    "How do I boil an egg?": "Put the egg in boiling water for nine minutes, then cool it in cold water.",
    "What is 2 + 2?": "Thank you for your question. After careful consideration of the arithmetic involved, "
                      "and checking the result twice, the answer is that two plus two makes four, which is the "
                      "sum of the two numbers you gave.",
}


def agent(question):
    return ANSWERS[question]


def test_answers_stay_short(scorekit):
    runs = [{"input": q, "output": agent(q)} for q in ANSWERS]
    scorekit.check(runs, scorers=["word_budget"], config={"word_budget": {"max_words": 20}})
