#!/usr/bin/env python3
"""Probe scorers for the tests: each does what its name says, so that the host's handling of
a Python plugin that misbehaves, or tries to leave its sandbox, can be checked."""

import math
import os
import socket

from scorekit_sdk import CAP_JUDGE, Info, Scorer, ScorerError, log, scored, serve


class Probe(Scorer):
    NAME = ""
    CAPS = ()

    def info(self):
        return Info(name=self.NAME, version="0.0.1", description="test probe", threshold=0.5, capabilities=self.CAPS)


class Raises(Probe):
    NAME = "probe_raises"

    def score(self, call):
        raise ValueError("the probe could not read " + call.run.output)


class RaisesCode(Probe):
    NAME = "probe_raises_code"

    def score(self, call):
        raise ScorerError("invalid_run", "the run has no passage to check; add context")


class NaN(Probe):
    NAME = "probe_nan"

    def score(self, call):
        return scored(math.nan, "not a number")


class Nothing(Probe):
    NAME = "probe_nothing"

    def score(self, call):
        return None


class Sneaky(Probe):
    """Asks the judge without declaring the capability."""

    NAME = "probe_sneaky"

    def score(self, call):
        if call.judge is None:
            return scored(0.5, "no judge given")
        return scored(1, call.judge.ask("let me in").content)


class Judged(Probe):
    """Sends the output to the judge and scores 1 with its answer."""

    NAME = "probe_judged"
    CAPS = (CAP_JUDGE,)

    def score(self, call):
        if call.judge is None:
            return scored(0, "no judge")
        return scored(1, call.judge.ask(call.run.output, json=False).content)


class Escape(Probe):
    """Tries the network (the address in the run's input), the host's files (the path in
    its output) and the environment, and says what it reached."""

    NAME = "probe_escape"

    def score(self, call):
        found = []
        host, port = call.run.input.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=2).close()
            found.append("network")
        except OSError as e:
            log.info("no network", error=str(e))
        try:
            with open(call.run.output) as f:
                f.read(1)
            found.append("file")
        except OSError as e:
            log.info("no file", error=str(e))
        keys = sorted(k for k in os.environ if "KEY" in k or "SECRET" in k or "TOKEN" in k)
        if keys:
            found.append("env " + ",".join(keys))
        return scored(1 if not found else 0, "reached: " + ("; ".join(found) or "nothing"))


if __name__ == "__main__":
    serve(Raises, RaisesCode, NaN, Nothing, Sneaky, Judged, Escape)
