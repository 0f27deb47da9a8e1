#!/usr/bin/env python3
"""A Python scorer that asks the judge: does the output answer what the input asked?

It declares the "judge" capability, so the host gives each call a judge (call.judge) that
sends its requests to the LLM the host is configured with: with the tenant's key, within the
tenant's budget, through the host's cache, recorded in the result's telemetry. The plugin
itself never holds a key and has no network. Without a judge it is skipped (no_judge),
and an answer it cannot read is failed with the judge's words: never a score of 0.
"""

import json
import re

from scorekit_sdk import (CAP_JUDGE, JUDGE_ERROR, Info, Range, Scorer, ScorerError, Step, no_judge, scored, serve,
                          skipped)

PROMPT = """You grade whether an AI agent's answer addresses what it was asked.
{purpose}
<question>
{question}
</question>

<answer>
{answer}
</answer>

Reply with a JSON object: {{"score": a number from 0 (does not address it) to 1 (fully addresses it), "reasoning": "one sentence"}}."""

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}, "reasoning": {"type": "string"}},
    "required": ["score", "reasoning"],
    "additionalProperties": False,
}


def read_verdict(text):
    """The judge's JSON object, from a bare object or one inside prose or a code fence."""
    for candidate in [text] + re.findall(r"\{.*\}", text, re.DOTALL):
        try:
            doc = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(doc, dict):
            return doc
    raise ScorerError(JUDGE_ERROR, f"the judge answered no JSON object; judge output: {text[:500]}")


class AnswersQuestion(Scorer):
    def info(self):
        return Info(
            name="answers_question",
            version="0.1.0",
            description="Whether the output addresses what the input asked, as an LLM judge grades it (0 to 1).",
            range=Range(0, 1),
            threshold=0.7,
            capabilities=[CAP_JUDGE],
        )

    def score(self, call):
        run = call.run
        if call.judge is None:
            return no_judge("answers_question")
        if not run.input.strip():
            return skipped("the run has no input: there is no question to answer")
        purpose = f"The agent's purpose: {run.purpose()}\n" if run.purpose() else ""
        prompt = PROMPT.format(purpose=purpose, question=run.input, answer=run.output)
        # A failed request raises ScorerError (judge_error, limit_exceeded ...), which fails
        # the call with the host's reason.
        answer = call.judge.ask(prompt, schema=SCHEMA)
        verdict = read_verdict(answer.content)
        score = verdict.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise ScorerError(JUDGE_ERROR, f"the judge's score is {score!r}, not a number from 0 to 1; judge output: {answer.content[:500]}")
        reasoning = str(verdict.get("reasoning", ""))
        return scored(score, reasoning, steps=[Step("judge", prompt=prompt, output=verdict)])


if __name__ == "__main__":
    serve(AnswersQuestion)
