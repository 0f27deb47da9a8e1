"""A real `scorekit serve` for the tests: the binary built from this repository ($SCOREKIT_BIN,
which the Go test that runs these sets), a temporary SQLite database, a tenant and a key made
with the command line, and a free loopback port (--addr 127.0.0.1:0; the address is read
from what serve prints). Judge scorers talk to a small OpenAI-compatible endpoint started
here (the only stand-in: an LLM cannot run in a test), which answers every relevancy prompt
with a fixed verdict, and a prompt containing JUDGE-FAULT with prose, as a misbehaving model
does."""

import base64
import json
import os
import re
import secrets
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scorekit_client import ScorekitClient

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JUDGE_SCORE = 0.9
JUDGE_FAULT = "JUDGE-FAULT"


def scorekit_bin():
    exe = os.environ.get("SCOREKIT_BIN") or os.path.join(REPO, "bin", "scorekit")
    assert os.path.exists(exe), f"{exe} not found: build it with make build (or go build -o bin/scorekit ./cmd/scorekit), or set SCOREKIT_BIN"
    return exe


class Judge(BaseHTTPRequestHandler):
    auth = []

    def log_message(self, *args):
        pass

    def _send(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.endswith("/models"):
            return self._send(200, {"object": "list", "data": [{"id": "test-judge", "object": "model", "owned_by": "test"}]})
        self._send(404, {"error": {"message": f"no route GET {self.path}", "type": "invalid_request_error"}})

    def do_POST(self):
        Judge.auth.append(self.headers.get("Authorization", ""))
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if not self.path.endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route POST {self.path}", "type": "invalid_request_error"}})
        prompt = "\n".join(m["content"] for m in req["messages"])
        if JUDGE_FAULT in prompt:
            content = "I would rather not grade this one."
        elif "Reply with the word OK" in prompt:
            content = "OK"
        else:
            content = json.dumps({"reasoning": "The output answers what the input asked.", "score": JUDGE_SCORE})
        self._send(200, {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": req["model"],
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})


class Service:
    """A running scorekit serve: url, the key of tenant acme, the judge's URL, serve's log."""

    def __init__(self):
        self.bin = scorekit_bin()
        self.dir = tempfile.mkdtemp(prefix="scorekit-py-")
        self.db = os.path.join(self.dir, "scorekit.db")
        self.cli("tenants", "create", "acme")
        self.key = self.cli("keys", "create", "--tenant", "acme").strip()
        self.judge = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
        threading.Thread(target=self.judge.serve_forever, daemon=True).start()
        self.judge_url = f"http://127.0.0.1:{self.judge.server_address[1]}/v1"
        env = {**os.environ, "SCOREKIT_SECRET_KEY": base64.b64encode(secrets.token_bytes(32)).decode()}
        # --max-attempts 2: a judge failure is retried once, then stored as failed.
        self.proc = subprocess.Popen([self.bin, "serve", "--addr", "127.0.0.1:0", "--db", self.db, "--judge-url", self.judge_url,
                                      "--judge-model", "test-judge", "--judge-key-env", "none", "--max-attempts", "2"],
                                     cwd=self.dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.stderr = []
        found = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.stderr.append(line)
                m = re.search(r"serving on (http://[0-9.]+:[0-9]+)", line)
                if m:
                    self.url = m.group(1)
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(60):
            self.stop()
            raise AssertionError("scorekit serve did not say where it listens within 60 s:\n" + self.log())

    def log(self):
        return "".join(self.stderr)

    def cli(self, *args):
        out = subprocess.run([self.bin, *args, "--db", self.db], cwd=getattr(self, "dir", None), capture_output=True, text=True)
        assert out.returncode == 0, f"scorekit {' '.join(args)}: {out.stderr}"
        return out.stdout

    def client(self, key=None):
        return ScorekitClient(self.url, api_key=self.key if key is None else key)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.judge.shutdown()


@pytest.fixture(scope="module")
def svc():
    s = Service()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def client(svc):
    return svc.client()


def jsonl(path):
    with open(os.path.join(REPO, path)) as f:
        return f.read()


def wait_until(pred, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False
