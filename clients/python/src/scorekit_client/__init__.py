"""scorekit_client: a typed client for the scorekit evaluation service, and a pytest gate.

    from scorekit_client import ScorekitClient, ScorekitError

    client = ScorekitClient("http://127.0.0.1:8080", api_key=os.environ["SCOREKIT_KEY"])
    result = client.score({"scorer": "prescreen", "run": {"input": "What is the capital of France?", "output": "Paris"}})

The pytest plugin (scorekit_client.pytest_plugin, registered with pytest when the package is
installed) gives tests a `scorekit` fixture that scores a test's runs, locally with the
scorekit command or against a service, and fails the test with the scorer's reason when a
threshold is missed.
"""

from ._openapi import OPERATIONS
from .client import ScorekitClient, fixed, round_evaluation, round_insight, round_mean, round_pass_rate
from .errors import ScoreFailedError, ScorekitError

__version__ = "0.1.0"

__all__ = ["OPERATIONS", "ScoreFailedError", "ScorekitClient", "ScorekitError", "fixed", "round_evaluation",
           "round_insight", "round_mean", "round_pass_rate"]
