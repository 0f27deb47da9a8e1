#!/usr/bin/env python3
"""Generates the Python client's types from the service's OpenAPI document.

    python3 gen_types.py openapi.json clients/python/src/scorekit_client/_openapi.py

(make python-client-types; make generate runs it after go generate rewrites the document.)
Each schema of components.schemas becomes a TypedDict of the same name, each property typed
from its schema (required ones plain, the others NotRequired; a nullable type Optional; an
enum a Literal; oneOf a Union; an object of values a Dict), with the schema's description
as its docstring. Each operation's query parameters become a TypedDict named after its
operationId (list-insights: ListInsightsQuery), and OPERATIONS maps every operationId to
its method and path.

Debian packages no OpenAPI generator for Python and PyPI is out of reach, so this is a
small one on the standard library, for the parts of OpenAPI 3.1 the service's document uses;
a schema construct it does not know stops it with the construct's place in the document.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
import textwrap
from typing import Any, Dict, List, Tuple


class Generator:
    def __init__(self, doc: Dict[str, Any]):
        self.doc = doc
        self.schemas: Dict[str, Any] = doc["components"]["schemas"]
        self.out: List[str] = []
        # Inline object schemas get a name of their own, defined before their user.
        self.pending: List[Tuple[str, Dict[str, Any], str]] = []

    def type_of(self, s: Dict[str, Any], where: str, name_hint: str) -> str:
        if "$ref" in s:
            ref = s["$ref"]
            if not ref.startswith("#/components/schemas/"):
                raise SystemExit(f"gen_types: {where}: $ref {ref} is not a component schema")
            return "@" + ref.rsplit("/", 1)[1] + "@"
        if "oneOf" in s or "anyOf" in s:
            parts = []
            for i, sub in enumerate(s.get("oneOf") or s.get("anyOf")):
                t = self.type_of(sub, f"{where}/oneOf/{i}", name_hint)
                if t not in parts:
                    parts.append(t)
            return parts[0] if len(parts) == 1 else f"Union[{', '.join(parts)}]"
        if "enum" in s:
            values = s["enum"]
            if values == [None]:
                return "None"
            lit = f"Literal[{', '.join(json.dumps(v) for v in values)}]"
            return lit
        t = s.get("type")
        if isinstance(t, list):
            kinds = [k for k in t if k != "null"]
            if len(kinds) != 1:
                raise SystemExit(f"gen_types: {where}: type {t} is not one type or one type and null")
            inner = self.type_of({**s, "type": kinds[0]}, where, name_hint)
            return f"Optional[{inner}]" if "null" in t else inner
        if t is None:
            if s.get("properties"):
                t = "object"
            else:
                return "Any"
        if t == "string":
            return "str"
        if t == "integer":
            return "int"
        if t == "number":
            return "float"
        if t == "boolean":
            return "bool"
        if t == "null":
            return "None"
        if t == "array":
            items = s.get("items", {})
            return f"List[{self.type_of(items, where + '/items', name_hint + 'Item')}]"
        if t == "object":
            if s.get("properties"):
                self.pending.append((name_hint, s, where))
                return "@" + name_hint + "@"
            extra = s.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"Dict[str, {self.type_of(extra, where + '/additionalProperties', name_hint + 'Value')}]"
            return "Dict[str, Any]"
        raise SystemExit(f"gen_types: {where}: type {t!r} is not one this generator knows; extend clients/python/gen_types.py")

    def typed_dict(self, name: str, s: Dict[str, Any], where: str) -> None:
        required = set(s.get("required") or [])
        fields = []
        for prop, ps in (s.get("properties") or {}).items():
            t = self.type_of(ps, f"{where}/properties/{prop}", name + camel(prop))
            if prop not in required:
                t = f"NotRequired[{t}]"
            fields.append((prop, t, ps.get("description", "")))
        doc = s.get("description", "")
        plain = all(p.isidentifier() and not keyword.iskeyword(p) for p, _, _ in fields)
        lines: List[str] = []
        if plain:
            lines.append(f"class {name}(TypedDict):")
            lines.append(docstring(doc or f"{name}, as the service's OpenAPI document describes it.", "    "))
            for prop, t, d in fields:
                if d:
                    lines.extend(("    #: " + l).rstrip() for l in wrap(d, 88))
                lines.append(f"    {prop}: {quote_refs(t)}")
        else:
            # A property that is not a Python name (a keyword such as "from", "$schema"):
            # TypedDict's call form, documented in a comment.
            if doc:
                lines.extend(("#: " + l).rstrip() for l in wrap(doc, 92))
            lines.append(f"{name} = TypedDict({json.dumps(name)}, {{")
            for prop, t, d in fields:
                if d:
                    lines.extend(("    #: " + l).rstrip() for l in wrap(d, 88))
                lines.append(f"    {json.dumps(prop)}: {quote_refs(t, call_form=True)},")
            lines.append("})")
        self.out.append("\n".join(lines))

    def flush(self) -> None:
        while self.pending:
            name, s, where = self.pending.pop(0)
            self.typed_dict(name, s, where)

    def operations(self) -> Tuple[List[str], List[str]]:
        ops, queries = [], []
        for path, methods in sorted(self.doc["paths"].items()):
            for method, op in sorted(methods.items()):
                oid = op["operationId"]
                ops.append(f"    {json.dumps(oid)}: ({json.dumps(method.upper())}, {json.dumps(path)}),")
                params = [p for p in op.get("parameters") or [] if p.get("in") == "query"]
                if not params:
                    continue
                name = camel(oid) + "Query"
                lines = [f"class {name}(TypedDict, total=False):",
                         docstring(f"The query of {method.upper()} {path} ({oid}).", "    ")]
                for p in params:
                    if p.get("description"):
                        lines.extend(("    #: " + l).rstrip() for l in wrap(p["description"], 88))
                    lines.append(f"    {p['name']}: {quote_refs(self.type_of(p['schema'], oid, name + camel(p['name'])))}")
                queries.append("\n".join(lines))
        return ops, queries

    def render(self, source: str) -> str:
        for name in sorted(self.schemas):
            self.typed_dict(name, self.schemas[name], f"#/components/schemas/{name}")
            self.flush()
        ops, queries = self.operations()
        self.flush()
        head = f'''"""The service's types, generated from {source} by clients/python/gen_types.py
(make python-client-types). Do not edit: change the API's Go types, run make generate."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, NotRequired, Optional, Tuple, TypedDict, Union

'''
        body = "\n\n\n".join(self.out + queries)
        table = "#: Every operation of the API by operationId: its method and path.\nOPERATIONS: Dict[str, Tuple[str, str]] = {\n" + "\n".join(ops) + "\n}\n"
        return head + body + "\n\n\n" + table


def camel(s: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]+", s) if p)


def quote_refs(t: str, call_form: bool = False) -> str:
    """A reference to another type (@Name@) as a class body writes it: bare, since
    annotations are evaluated lazily (from __future__ import annotations). The call form
    quotes it instead."""
    return re.sub(r"@(\w+)@", r'"\1"' if call_form else r"\1", t)


def wrap(text: str, width: int) -> List[str]:
    out: List[str] = []
    for para in text.strip().split("\n"):
        out.extend(textwrap.wrap(para, width) or [""])
    return out


def docstring(text: str, indent: str) -> str:
    lines = wrap(text.replace('"""', "'''").replace("\\", "\\\\"), 88)
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""'
    return f'{indent}"""' + lines[0] + "\n" + "\n".join(indent + l if l else "" for l in lines[1:]) + f'\n{indent}"""'


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit("usage: gen_types.py OPENAPI.json OUT.py")
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    text = Generator(doc).render(sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
