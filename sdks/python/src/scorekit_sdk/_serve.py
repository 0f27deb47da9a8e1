"""A Python scorer as a scorekit process plugin: go-plugin's protocol over gRPC.

The host (host/process) starts the plugin's script, pinned by sha256 in its manifest, under
its sandbox, and talks to it as to any go-plugin plugin:

  1. it sets SCOREKIT_PLUGIN (the magic cookie), PLUGIN_PROTOCOL_VERSIONS and
     PLUGIN_UNIX_SOCKET_DIR; without the cookie the plugin says what it is and exits;
  2. the plugin serves gRPC on a Unix socket in that folder (the sandbox gives it no
     network) and prints go-plugin's handshake line on stdout:
     CORE-VERSION|APP-VERSION|unix|PATH|grpc;
  3. the host checks grpc.health.v1 for service "plugin", then calls the Scorer service of
     proto/scorekit/plugin/v1/plugin.proto: Info, Configure, and Score calls on the Session
     stream (the plugin offers it), on which the scorer's judge requests travel too; a
     host that makes unary Score calls passes the judge's GRPCBroker id instead, and the
     plugin dials the Judge service the host serves through go-plugin's broker stream;
  4. on close the host calls plugin.GRPCController/Shutdown and the plugin exits; it also
     exits when the host that started it is gone.

Logs go to stderr as JSON lines; the host forwards them with their level and fields.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
import traceback
from concurrent import futures
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import grpc

from . import _log
from ._contract import (ABI_VERSION, INVALID_CONFIG, INVALID_RESULT, INVALID_RUN, JUDGE_ERROR, SCORER_ERROR,
                        UNAVAILABLE, Info, Result, Run, ScorerError, failed_from, validate_result)
from ._judge import Call, CompletionRequest, CompletionResponse, Judge
from ._proto import (grpc_broker_pb2, grpc_broker_pb2_grpc, grpc_controller_pb2, grpc_controller_pb2_grpc,
                     health_pb2, health_pb2_grpc, plugin_pb2, plugin_pb2_grpc)
from ._scorer import Scorer

#: go-plugin's magic cookie for scorekit plugins (internal/pluginrpc).
COOKIE_KEY = "SCOREKIT_PLUGIN"
COOKIE_VALUE = "7c1b4a0e-scorer"
#: go-plugin's own protocol version, and scorekit's process protocol (pluginrpc.ProtocolVersion).
CORE_PROTOCOL_VERSION = 1
PROTOCOL_VERSION = 1

#: What the plugin accepts from its host: the host enforces its run limit before it sends.
MAX_RECEIVE = 1 << 30

Factory = Callable[[], Scorer]


def registry(scorers: Sequence[Union[Factory, type]]) -> Tuple[Dict[str, Factory], List[Info]]:
    """The scorers by name and their Infos, in order. Each factory (a Scorer subclass, or
    any callable that returns a Scorer) is called once to read its Info; an Info that leaves
    abi_version at 0 gets ABI_VERSION. A duplicate name or a factory that does not make a
    Scorer raises ValueError."""
    factories: Dict[str, Factory] = {}
    infos: List[Info] = []
    if not scorers:
        raise ValueError("serve: no scorer; pass each scorer class (or factory) to serve()")
    for f in scorers:
        s = f()
        if not isinstance(s, Scorer):
            raise ValueError(f"serve: {f!r} made {type(s).__name__}, not a scorekit_sdk.Scorer; subclass Scorer")
        info = s.info()
        if not isinstance(info, Info):
            raise ValueError(f"serve: {type(s).__name__}.info() returned {type(info).__name__}, want scorekit_sdk.Info")
        if info.abi_version == 0:
            info = Info(**{**info.__dict__, "abi_version": ABI_VERSION})
        if info.name in factories:
            raise ValueError(f"serve: scorer {info.name!r} registered twice")
        factories[info.name] = f
        infos.append(info)
    return factories, infos


def invoke(scorer: Scorer, call: Call) -> Result:
    """Calls scorer.score(call): an exception is a failed result with its message (and its
    code, for a ScorerError), never a 0; a value that is not a Result is failed with
    invalid_result. The traceback goes to the host's log."""
    name = _name(scorer)
    try:
        res = scorer.score(call)
    except Exception as e:  # noqa: BLE001: any exception is the scorer's failure
        _log.log.error("scorer raised", scorer=name, error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
        return failed_from(e)
    if not isinstance(res, Result):
        return Result(status="failed", reason="", error_code=INVALID_RESULT,
                      error_message=f"scorer {name} returned {type(res).__name__}; return a Result: scored(), skipped() or failed()")
    return res


def _name(scorer: Scorer) -> str:
    try:
        return scorer.info().name
    except Exception:  # noqa: BLE001
        return type(scorer).__name__


def encode_result(scorer: Scorer, res: Result) -> Tuple[bytes, Optional[Tuple[str, str]]]:
    """The result's JSON, or the error to answer instead when JSON cannot carry it."""
    try:
        return json.dumps(res.to_json(), allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode(), None
    except (TypeError, ValueError) as e:
        why = validate_result(res) or str(e)
        return b"", (INVALID_RESULT, f"scorer {_name(scorer)} returned an invalid result: {why}")


class Plugin:
    """The plugin's scorers and their configured instances, by id. The host calls each
    instance one call at a time."""

    def __init__(self, scorers: Sequence[Union[Factory, type]]):
        self.factories, self.infos = registry(scorers)
        self.infos_json = json.dumps([i.to_json() for i in self.infos], separators=(",", ":")).encode()
        self._lock = threading.Lock()
        self._next = 0
        self._instances: Dict[int, Scorer] = {}

    def configure(self, name: str, config_json: bytes) -> Tuple[int, Optional[Tuple[str, str]]]:
        f = self.factories.get(name)
        if f is None:
            return 0, (INVALID_CONFIG, f"plugin carries no scorer {name!r}")
        try:
            config = json.loads(config_json) if config_json else {}
        except ValueError as e:
            return 0, (INVALID_CONFIG, f"config is not JSON: {e}")
        s = f()
        try:
            s.configure(config if isinstance(config, dict) else {})
        except Exception as e:  # noqa: BLE001: a refused config, whatever the exception
            r = failed_from(e)
            code = INVALID_CONFIG if r.error_code == SCORER_ERROR else r.error_code
            return 0, (code, r.error_message)
        with self._lock:
            self._next += 1
            self._instances[self._next] = s
            return self._next, None

    def score(self, instance: int, run_json: bytes, judge: Optional[Judge], deadline: Optional[float]) -> plugin_pb2.ScoreResponse:
        with self._lock:
            s = self._instances.get(instance)
        if s is None:
            return _error_response(UNAVAILABLE, f"no configured instance {instance} in this plugin process")
        try:
            doc = json.loads(run_json)
        except ValueError as e:
            return _error_response(INVALID_RUN, f"decode run: {e}")
        if not isinstance(doc, dict):
            return _error_response(INVALID_RUN, f"decode run: want a JSON object, got {type(doc).__name__}")
        try:
            res = s.score(Call(run=Run.from_json(doc), judge=judge, deadline=deadline))
        except Exception as e:  # noqa: BLE001: any exception is the scorer's failure, never a 0
            _log.log.error("scorer raised", scorer=_name(s), error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
            r = failed_from(e)
            return _error_response(r.error_code, r.error_message)
        if not isinstance(res, Result):
            return _error_response(INVALID_RESULT, f"scorer {_name(s)} returned {type(res).__name__}; return a Result: scored(), skipped() or failed()")
        body, err = encode_result(s, res)
        if err:
            return _error_response(*err)
        return plugin_pb2.ScoreResponse(result_json=body)

    def release(self, instance: int) -> None:
        with self._lock:
            s = self._instances.pop(instance, None)
        if s is not None:
            s.close()


def _error_response(code: str, message: str) -> plugin_pb2.ScoreResponse:
    return plugin_pb2.ScoreResponse(error=plugin_pb2.Error(code=code, message=message))


def _raise_for(err: plugin_pb2.Error) -> None:
    if err.code or err.message:
        raise ScorerError(err.code or JUDGE_ERROR, err.message)


def _responses(resp: plugin_pb2.CompleteResponse) -> List[CompletionResponse]:
    if resp.HasField("error"):
        _raise_for(resp.error)
    try:
        return [CompletionResponse.from_json(r) for r in json.loads(resp.responses_json or b"[]")]
    except (ValueError, AttributeError) as e:
        raise ScorerError(JUDGE_ERROR, f"decode judge responses: {e}") from None


def _vectors(resp: plugin_pb2.EmbedResponse) -> List[List[float]]:
    if resp.HasField("error"):
        _raise_for(resp.error)
    return [list(v.values) for v in resp.vectors]


def _requests_json(requests: Sequence[CompletionRequest]) -> bytes:
    return json.dumps([r.to_json() if isinstance(r, CompletionRequest) else r for r in requests]).encode()


class _StreamJudge(Judge):
    """The judge of a call on the Session: a request goes out on the stream and the host's
    answer is the next message in. One request at a time."""

    def __init__(self, out: "queue.SimpleQueue[Any]", incoming: Iterable[plugin_pb2.HostMessage]):
        self._out = out
        self._in = incoming
        self._lock = threading.Lock()

    def _round_trip(self, msg: plugin_pb2.PluginMessage, want: str) -> Any:
        with self._lock:
            self._out.put(msg)
            try:
                reply = next(self._in)  # type: ignore[call-overload]
            except StopIteration:
                raise ScorerError(JUDGE_ERROR, "judge call to the host failed: the host ended the session") from None
            except grpc.RpcError as e:
                raise ScorerError(JUDGE_ERROR, f"judge call to the host failed: {e.details()}") from None
        if reply.WhichOneof("msg") != want:
            raise ScorerError(JUDGE_ERROR, f"session: host answered a judge request with {reply.WhichOneof('msg')}")
        return getattr(reply, want)

    def complete(self, requests: Sequence[CompletionRequest]) -> List[CompletionResponse]:
        msg = plugin_pb2.PluginMessage(complete=plugin_pb2.CompleteRequest(requests_json=_requests_json(requests)))
        return _responses(self._round_trip(msg, "complete"))

    def embed(self, texts: Sequence[str]) -> List[List[float]]:
        msg = plugin_pb2.PluginMessage(embed=plugin_pb2.EmbedRequest(texts=list(texts)))
        return _vectors(self._round_trip(msg, "embed"))


class _BrokerJudge(Judge):
    """The judge of a unary call: the host's Judge service, dialled through go-plugin's
    broker; every request quotes the call's id."""

    def __init__(self, stub: plugin_pb2_grpc.JudgeStub, call: int, deadline: Optional[float]):
        self._stub = stub
        self._call = call
        self._deadline = deadline

    def _timeout(self) -> Optional[float]:
        return None if self._deadline is None else max(self._deadline - time.time(), 0.001)

    def complete(self, requests: Sequence[CompletionRequest]) -> List[CompletionResponse]:
        try:
            resp = self._stub.Complete(plugin_pb2.CompleteRequest(call=self._call, requests_json=_requests_json(requests)),
                                       timeout=self._timeout())
        except grpc.RpcError as e:
            raise ScorerError(JUDGE_ERROR, f"judge call to the host failed: {e.details()}") from None
        return _responses(resp)

    def embed(self, texts: Sequence[str]) -> List[List[float]]:
        try:
            resp = self._stub.Embed(plugin_pb2.EmbedRequest(call=self._call, texts=list(texts)), timeout=self._timeout())
        except grpc.RpcError as e:
            raise ScorerError(JUDGE_ERROR, f"judge call to the host failed: {e.details()}") from None
        return _vectors(resp)


class _Broker(grpc_broker_pb2_grpc.GRPCBrokerServicer):
    """go-plugin's broker, plugin side: the host sends the address of each service it
    serves for the plugin (a ConnInfo with its id) on the StartStream stream; dial() waits
    for the id's address and connects to it."""

    DIAL_TIMEOUT = 5.0

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._conns: Dict[int, grpc_broker_pb2.ConnInfo] = {}
        self._stubs: Dict[int, plugin_pb2_grpc.JudgeStub] = {}

    def StartStream(self, request_iterator, context):  # noqa: N802: gRPC's name
        done = threading.Event()

        def read() -> None:
            try:
                for info in request_iterator:
                    with self._cv:
                        self._conns[info.service_id] = info
                        self._cv.notify_all()
            except grpc.RpcError:
                pass
            finally:
                done.set()

        threading.Thread(target=read, name="broker", daemon=True).start()
        context.add_callback(done.set)
        done.wait()
        return
        yield  # a stream that sends nothing: the plugin offers the host no service

    def judge(self, broker_id: int) -> plugin_pb2_grpc.JudgeStub:
        with self._cv:
            if broker_id in self._stubs:
                return self._stubs[broker_id]
            if not self._cv.wait_for(lambda: broker_id in self._conns, timeout=self.DIAL_TIMEOUT):
                raise ScorerError(JUDGE_ERROR, f"dial the host's judge (broker id {broker_id}): the host sent no address for it within {self.DIAL_TIMEOUT:g}s")
            info = self._conns[broker_id]
            target = f"unix:{info.address}" if info.network == "unix" else info.address
            channel = grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", MAX_RECEIVE)])
            stub = plugin_pb2_grpc.JudgeStub(channel)
            self._stubs[broker_id] = stub
            return stub


class _ScorerService(plugin_pb2_grpc.ScorerServicer):
    def __init__(self, plugin: Plugin, broker: _Broker):
        self.plugin = plugin
        self.broker = broker

    def Info(self, request, context):  # noqa: N802
        return plugin_pb2.InfoResponse(infos_json=self.plugin.infos_json, session=True)

    def Configure(self, request, context):  # noqa: N802
        instance, err = self.plugin.configure(request.scorer, request.config_json)
        if err:
            return plugin_pb2.ConfigureResponse(error=plugin_pb2.Error(code=err[0], message=err[1]))
        return plugin_pb2.ConfigureResponse(instance=instance)

    def _broker_judge(self, req: plugin_pb2.ScoreRequest, deadline: Optional[float]) -> Optional[Judge]:
        if not req.judge_broker_id:
            return None
        return _BrokerJudge(self.broker.judge(req.judge_broker_id), req.call, deadline)

    def Score(self, request, context):  # noqa: N802
        left = context.time_remaining()
        deadline = time.time() + left if left is not None else _deadline(request)
        try:
            judge = self._broker_judge(request, deadline)
        except ScorerError as e:
            return _error_response(e.code, e.message)
        return self.plugin.score(request.instance, request.run_json, judge, deadline)

    def Release(self, request, context):  # noqa: N802
        self.plugin.release(request.instance)
        return plugin_pb2.ReleaseResponse()

    def Session(self, request_iterator, context):  # noqa: N802
        """Score calls on one stream, one at a time. A worker reads the host's messages and
        runs each call (its judge requests read their answers from the same stream); this
        generator sends what the worker puts out."""
        out: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        end = object()
        problem: List[str] = []

        def work() -> None:
            try:
                for msg in request_iterator:
                    if msg.WhichOneof("msg") != "score":
                        problem.append(f"session: got {msg.WhichOneof('msg')} between calls, want a score request")
                        return
                    req = msg.score
                    deadline = _deadline(req)
                    try:
                        if req.session_judge:
                            judge: Optional[Judge] = _StreamJudge(out, request_iterator)
                        else:
                            judge = self._broker_judge(req, deadline)
                    except ScorerError as e:
                        out.put(plugin_pb2.PluginMessage(score=_error_response(e.code, e.message)))
                        continue
                    resp = self.plugin.score(req.instance, req.run_json, judge, deadline)
                    out.put(plugin_pb2.PluginMessage(score=resp))
            except grpc.RpcError:
                pass  # the host ended the stream
            except Exception as e:  # noqa: BLE001: the stream ends; the host sees why in the log
                _log.log.error("session ended", error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
            finally:
                out.put(end)

        threading.Thread(target=work, name="session", daemon=True).start()
        while True:
            m = out.get()
            if m is end:
                break
            yield m
        if problem:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem[0])


def _deadline(req: plugin_pb2.ScoreRequest) -> Optional[float]:
    return req.deadline_unix_nano / 1e9 if req.deadline_unix_nano else None


class _Health(health_pb2_grpc.HealthServicer):
    def Check(self, request, context):  # noqa: N802
        known = request.service in ("", "plugin")
        status = health_pb2.HealthCheckResponse.SERVING if known else health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
        return health_pb2.HealthCheckResponse(status=status)


class _Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    def __init__(self) -> None:
        self.server: Optional[grpc.Server] = None

    def Shutdown(self, request, context):  # noqa: N802
        _log.log.info("shutting down at the host's request")

        def stop() -> None:
            if self.server is not None:
                self.server.stop(grace=0.5).wait(1.0)
            os._exit(0)

        threading.Thread(target=stop, name="shutdown", daemon=True).start()
        return grpc_controller_pb2.Empty()


def _exit_with_parent(ppid: int) -> None:
    """Ends the plugin when the host that started it is gone (killed before it could close
    its plugins): the plugin is then re-parented, and nobody will call it again."""
    while True:
        time.sleep(1)
        if os.getppid() != ppid:
            os._exit(0)


def _socket_group(path: str) -> None:
    """Gives the socket to PLUGIN_UNIX_SOCKET_GROUP when the host names one, as go-plugin's
    Go plugins do."""
    group = os.environ.get("PLUGIN_UNIX_SOCKET_GROUP", "")
    if not group:
        return
    try:
        gid = int(group) if group.isdigit() else __import__("grp").getgrnam(group).gr_gid
        os.chown(path, -1, gid)
        os.chmod(path, 0o660)
    except (OSError, KeyError) as e:
        _log.log.warn("cannot give the socket to the host's group", group=group, error=str(e))


def serve(*scorers: Union[Factory, type], max_workers: int = 8) -> None:
    """Serves the scorers (Scorer subclasses, or factories that return a Scorer) as a
    scorekit process plugin, until the host closes it. Call it from the plugin's script:

        if __name__ == "__main__":
            serve(WordBudget)

    Run by hand (without the host's magic cookie) it says it is a plugin and exits 1."""
    if os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write("This program is a scorekit plugin: the scorekit host starts it. It is not meant to be run by hand.\n"
                         "Check that it loads with: python3 -m scorekit_sdk check " + (sys.argv[0] or "SCRIPT") + "\n")
        sys.exit(1)
    _log.install()
    try:
        plugin = Plugin(scorers)
    except Exception as e:  # noqa: BLE001: an unloadable plugin says why, on stderr, and exits
        sys.stderr.write(f"scorekit plugin: {e}\n")
        sys.exit(1)
    offered = [v.strip() for v in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", str(PROTOCOL_VERSION)).split(",")]
    if str(PROTOCOL_VERSION) not in offered:
        # Answer with ours anyway: the host refuses it with a message naming both.
        _log.log.warn("host does not offer our protocol version", offered=offered, ours=PROTOCOL_VERSION)
    if os.environ.get("PLUGIN_CLIENT_CERT"):
        sys.stderr.write("scorekit plugin: the host asks for AutoMTLS, which Python plugins do not support; "
                         "load it without process.Options.AutoMTLS (the host and the plugin talk over a Unix socket only they reach)\n")
        sys.exit(1)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), name="parent", daemon=True).start()

    opts = [("grpc.max_receive_message_length", MAX_RECEIVE), ("grpc.max_send_message_length", -1)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers), options=opts)
    broker = _Broker()
    controller = _Controller()
    controller.server = server
    plugin_pb2_grpc.add_ScorerServicer_to_server(_ScorerService(plugin, broker), server)
    health_pb2_grpc.add_HealthServicer_to_server(_Health(), server)
    grpc_controller_pb2_grpc.add_GRPCControllerServicer_to_server(controller, server)
    grpc_broker_pb2_grpc.add_GRPCBrokerServicer_to_server(broker, server)

    socket_dir = os.environ.get("PLUGIN_UNIX_SOCKET_DIR", "")
    if socket_dir:
        path = os.path.join(socket_dir, f"scorekit-python-{os.getpid()}.sock")
        address, where = "unix:" + path, "unix|" + path
    else:
        address, where = "127.0.0.1:0", ""
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as e:
        _log.log.error("cannot listen", address=address, error=str(e))
        sys.exit(1)
    if not socket_dir:
        where = f"tcp|127.0.0.1:{port}"
    server.start()
    if socket_dir:
        _socket_group(path)
    _log.log.info("serving", scorers=[i.name for i in plugin.infos], address=where.split("|", 1)[1])
    sys.stdout.write(f"{CORE_PROTOCOL_VERSION}|{PROTOCOL_VERSION}|{where}|grpc\n")
    sys.stdout.flush()
    server.wait_for_termination()
