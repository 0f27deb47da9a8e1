"""scorekit_sdk: write scorekit scorers in Python.

A scorer grades one run (what an agent was asked, what it answered, the evidence it
retrieved) and returns a Result: scored with a score in its declared native range,
skipped with the reason it does not apply, or failed with the reason it could not judge
(never a score of 0). serve() runs scorers as a scorekit process plugin, which the host
starts and confines like any other (bubblewrap, cgroups, no network); a scorer that
declares the "judge" capability asks the host's judge (call.judge) and never holds a key.

    from scorekit_sdk import Info, Range, Scorer, scored, serve, skipped

    class WordBudget(Scorer):
        def info(self):
            return Info(name="word_budget", version="0.1.0", description="...", threshold=0.5)

        def score(self, call):
            words = len(call.run.output.split())
            ...

    if __name__ == "__main__":
        serve(WordBudget)

scorekit_sdk.testing scores runs in-process as the host would, checks the contract, and
checks that a plugin loads in a real host.
"""

from ._contract import (ABI_VERSION, CANCELED, CAP_EMBED, CAP_JUDGE, CODES, FAILED, INVALID_CONFIG, INVALID_RESULT,
                        INVALID_RUN, JUDGE_ERROR, LIMIT_EXCEEDED, SCORED, SCORER_ERROR, SKIPPED, TIMEOUT, TRAP, UNAVAILABLE,
                        UNIT, Dimension, ExpectedToolCall, Info, Passage, Range, Result, Run, ScorerError,
                        Step, ToolCall, Turn, failed, failed_from, no_judge, scored, skipped)
from ._judge import Call, CompletionRequest, CompletionResponse, Judge, Message
from ._log import Logger, log
from ._scorer import Scorer
from ._serve import serve

__version__ = "0.1.0"

__all__ = [
    "ABI_VERSION", "CANCELED", "CAP_EMBED", "CAP_JUDGE", "CODES", "FAILED", "INVALID_CONFIG", "INVALID_RESULT",
    "INVALID_RUN", "JUDGE_ERROR", "LIMIT_EXCEEDED", "SCORED", "SCORER_ERROR", "SKIPPED", "TIMEOUT", "TRAP",
    "UNAVAILABLE", "UNIT", "Call", "CompletionRequest", "CompletionResponse", "Dimension", "ExpectedToolCall", "Info",
    "Judge", "Logger", "Message", "Passage", "Range", "Result", "Run", "Scorer", "ScorerError", "Step", "ToolCall",
    "Turn", "failed", "failed_from", "log", "no_judge", "scored", "serve", "skipped",
]
