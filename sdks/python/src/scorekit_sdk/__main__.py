"""python3 -m scorekit_sdk check SCRIPT: write a Python plugin's manifest and load it once
in a real host, under its sandbox (the scorekit command's `plugin manifest`)."""

from __future__ import annotations

import argparse
import sys

from .testing import LoadError, check_loads


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m scorekit_sdk", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="write SCRIPT's manifest and load the plugin once in a real host, under its sandbox")
    check.add_argument("script", help="the plugin's script (executable, #!/usr/bin/env python3, ending in serve(...))")
    check.add_argument("-o", "--out", help="manifest to write (default: NAME.plugin.json next to the script)")
    check.add_argument("--scorekit", help="the scorekit command (default: $SCOREKIT_BIN, else scorekit on PATH)")
    check.add_argument("--read", action="append", default=[], help="another folder the plugin reads (repeatable)")
    args = ap.parse_args(argv)
    try:
        manifest, names = check_loads(args.script, scorekit=args.scorekit, out=args.out, extra_read=args.read)
    except LoadError as e:
        print(f"{args.script} does not load: {e}", file=sys.stderr)
        return 1
    folder = manifest.rsplit("/", 1)[0] if "/" in manifest else "."
    print(f"wrote {manifest}: scorers {', '.join(names)}, loaded once by the host as scorekit score and serve load it")
    print(f"score with it: scorekit score --plugins {folder} --scorers {','.join(names)} FILE.jsonl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
