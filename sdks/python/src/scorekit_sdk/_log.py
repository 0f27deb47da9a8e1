"""Log lines for the host: JSON on stderr, in hclog's shape ({"@level", "@message",
"@timestamp", "@module", fields}), which the host forwards to its structured logger with
their level and fields. Anything logged through Python's logging module goes the same way
once a plugin serves."""

from __future__ import annotations

import datetime
import json
import logging
import sys
import threading
from typing import Any, TextIO

_lock = threading.Lock()


def _write(stream: TextIO, level: str, message: str, module: str, fields: dict) -> None:
    entry = {
        "@level": level,
        "@message": message,
        "@module": module,
        "@timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds"),
    }
    for k, v in fields.items():
        if k not in entry:
            entry[k] = v
    line = json.dumps(entry, default=str, ensure_ascii=False)
    with _lock:
        stream.write(line + "\n")
        stream.flush()


class Logger:
    """A logger whose keyword arguments are fields: log.info("configured", instance=3)."""

    def __init__(self, module: str = "scorer", stream: TextIO | None = None):
        self.module = module
        self._stream = stream

    def _log(self, level: str, message: str, fields: dict) -> None:
        _write(self._stream or sys.stderr, level, message, self.module, fields)

    def debug(self, message: str, **fields: Any) -> None:
        self._log("debug", message, fields)

    def info(self, message: str, **fields: Any) -> None:
        self._log("info", message, fields)

    def warn(self, message: str, **fields: Any) -> None:
        self._log("warn", message, fields)

    def error(self, message: str, **fields: Any) -> None:
        self._log("error", message, fields)


#: The plugin's logger.
log = Logger()

_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn", logging.ERROR: "error",
           logging.CRITICAL: "error"}


class JSONHandler(logging.Handler):
    """Writes the records of Python's logging module as the host's JSON lines."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields = {}
            if record.exc_info:
                fields["error"] = self.formatException(record.exc_info)
            extra = getattr(record, "fields", None)
            if isinstance(extra, dict):
                fields.update(extra)
            level = _LEVELS.get(record.levelno, "info")
            _write(sys.stderr, level, record.getMessage(), record.name, fields)
        except Exception:  # a log line must never fail a call
            self.handleError(record)


def install() -> None:
    """Routes Python's logging to the host's JSON lines (INFO and above)."""
    root = logging.getLogger()
    if not any(isinstance(h, JSONHandler) for h in root.handlers):
        root.addHandler(JSONHandler())
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
