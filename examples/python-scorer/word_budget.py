#!/usr/bin/env python3
"""A first scorer in Python: it checks that an answer stays within a budget of words.

Everything a scorer needs is here: an Info that describes it, an optional config with its
schema and defaults, and a score method that returns scored, skipped or failed. Run as a
script by the scorekit host, it is a process plugin (serve at the bottom).
"""

from scorekit_sdk import Info, Range, Scorer, scored, serve, skipped


class WordBudget(Scorer):
    """Scores 1 for an output within max_words words, falling linearly to 0 at twice the
    budget."""

    def __init__(self):
        self.max_words = 100

    def info(self):
        return Info(
            name="word_budget",
            version="0.1.0",
            description="Whether the output stays within max_words words: 1 within the budget, falling to 0 at twice it.",
            range=Range(0, 1),
            threshold=0.5,
            config_schema={"type": "object", "additionalProperties": False,
                           "properties": {"max_words": {"type": "integer", "minimum": 1}}},
            defaults={"max_words": 100},
        )

    def configure(self, config):
        # The host has checked the config against config_schema and merged it over defaults.
        self.max_words = config["max_words"]

    def score(self, call):
        # An empty output is not this scorer's business (the pre-screen flags it), so it is
        # skipped with the reason, never scored 0.
        words = len(call.run.output.split())
        if words == 0:
            return skipped("the output is empty; the pre-screen judges empty outputs")
        over = (words - self.max_words) / self.max_words
        return scored(1 - min(max(over, 0.0), 1.0), f"{words} words for a budget of {self.max_words}")


if __name__ == "__main__":
    serve(WordBudget)
