#!/usr/bin/env python3
"""Builds the complete-code sets (go_examples, python_examples) and their cut-off
counterparts (code_cut) from Debian packages' source files into ../testdata/<set>/cases.jsonl.

    mkdir -p /tmp/deb && cd /tmp/deb && apt-get download golang-1.19-src python3.11-examples
    for f in *.deb; do mkdir -p x/${f%%_*}; dpkg-deb -x $f x/${f%%_*}; done
    python3 internal/corpus/tools/code_sets.py /tmp/deb/x

Go: every func Example... in the standard library's example_test.go files, 4 to 40 lines, as
written (the package clause and imports are not included: an Example function is what a
reader is shown). Python: every top-level function of 4 to 40 lines in the interpreter's
examples, source segment as written. Every other snippet is shown in a markdown fence after a
one-line lead-in, the way chat answers show code; the rest are raw. code_cut holds every
fourth snippet cut after 60% of its lines (a run stopped mid-way, no stop reason recorded).
"""
import ast, glob, os, random, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debian_sets import write  # noqa: E402  (one writer for every set)

ROOT = sys.argv[1]


def go_examples():
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "golang-1.19-src/usr/share/go-1.19/src/**/example_test.go"), recursive=True)):
        src = open(path, encoding="utf-8").read()
        pkg = os.path.relpath(os.path.dirname(path), os.path.join(ROOT, "golang-1.19-src/usr/share/go-1.19/src"))
        for m in re.finditer(r"^func (Example\w*)\(\) \{\n.*?^\}\n", src, re.S | re.M):
            body = m.group(0).rstrip("\n")
            n = body.count("\n") + 1
            if 4 <= n <= 40:
                name = m.group(1)
                what = name[len("Example"):].lstrip("_").replace("_", ".") or pkg
                out.append((f"{pkg}/{name}", f"Show a Go example of {pkg} {what}.", body, "go"))
    return out


def python_functions():
    out = []
    base = os.path.join(ROOT, "python3.11-examples/usr/share/doc/python3.11/examples")
    for path in sorted(glob.glob(os.path.join(base, "**/*.py"), recursive=True)):
        src = open(path, encoding="utf-8", errors="replace").read()
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            seg = ast.get_source_segment(src, node)
            if not seg:
                continue
            n = seg.count("\n") + 1
            if not 4 <= n <= 40:
                continue
            doc = (ast.get_docstring(node) or "").strip().split("\n")[0]
            task = f"Write a Python function {node.name}" + (f": {doc}" if doc else ".")
            out.append((os.path.relpath(path, base)[:-3] + "/" + node.name, task, seg, "python"))
    return out


def render(i, code, lang):
    if i % 2 == 0:
        return f"Here is one way to do it:\n\n```{lang}\n{code}\n```"
    return code


rng = random.Random(25)
cut = []
for name, snippets in (("go_examples", go_examples()), ("python_examples", python_functions())):
    rng.shuffle(snippets)
    snippets = snippets[:120]
    rows = []
    for i, (id, task, code, lang) in enumerate(snippets):
        rows.append({"id": id, "input": task, "output": render(i, code, lang), "label": "correct", "lang": "en"})
        if i % 4 == 0:
            lines = code.split("\n")
            part = "\n".join(lines[: max(2, int(len(lines) * 0.6))])
            cut.append({"id": f"{name}/{id}", "input": task, "output": render(i, part, lang) if i % 8 == 4 else part,
                        "label": "truncated", "lang": "en"})
    write(name, rows)
write("code_cut", cut)
