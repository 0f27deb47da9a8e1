import os
import sys

from scorekit_client import ScorekitClient, ScorekitError

client = ScorekitClient(
    os.environ.get("SCOREKIT_URL", "http://127.0.0.1:8080"),
    api_key=os.environ.get("SCOREKIT_KEY"),  # scorekit keys create --tenant NAME
)

try:
    result = client.score({
        "scorer": "prescreen",
        "run": {"input": "What is the capital of France?", "output": "Paris"},
    })
    print(f"{result['status']} {result['score']} passed={result['passed']}: {result['reason']}")
except ScorekitError as err:
    print(f"{err.code} (HTTP {err.status}): {err.detail}", file=sys.stderr)
    sys.exit(1)
