"""Stores the runs of a JSONL file in a scorekit service as the agent "assistant"'s, has the
service evaluate them with word_budget (the plugin it loaded from this folder, under its
sandbox) and prints the summary: the service's Python client at work."""

import json
import os
import sys

from scorekit_client import ScorekitClient

client = ScorekitClient(os.environ["SCOREKIT_URL"], api_key=os.environ["SCOREKIT_KEY"])
with open(sys.argv[1]) as f:
    runs = [{**json.loads(line), "agent": "assistant"} for line in f if line.strip()]
imported = client.import_runs(runs)
print(f"stored {imported['stored']} runs")

evaluation = client.evaluate("assistant", {
    "limit": imported["stored"],
    "scorers": ["word_budget"],
    "config": {"word_budget": {"max_words": 20}},
})
for s in evaluation["scorers"]:
    print(f"{s['name']}: mean {s['mean']:.2f}, pass rate {s['pass_rate']:.0%}, {s['scored']} scored, {s['skipped']} skipped")
