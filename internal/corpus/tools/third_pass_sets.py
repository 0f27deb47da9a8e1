#!/usr/bin/env python3
"""Builds the third pass's held-out sets of correct answers into ../testdata/<set>/cases.jsonl:
complete functions of the Go and Python standard libraries (go_stdlib, python_stdlib), and
the questions and answers of the Python FAQ (python_faq) and of the Debian FAQ in four
languages (debian_faq). corpus.derive repeats the functions and other correct answers back
to back for the held-out loops (code_loops, answer_loops).

    mkdir -p /tmp/deb3 && cd /tmp/deb3 && apt-get download libpython3.11-stdlib \
        libpython3.11-minimal python3.11-doc debian-faq debian-faq-de debian-faq-ja debian-faq-zh-cn
    for f in *.deb; do mkdir -p x/${f%%_*}; dpkg-deb -x $f x/${f%%_*}; done
    python3 internal/corpus/tools/third_pass_sets.py /tmp/deb3/x "$(go env GOROOT)"

Go: top-level functions of 4 to 40 lines in the standard library's non-test files (GOROOT/src,
cmd, vendor, internal, testdata, "_" folders and generated files left out, so no Example function and nothing of
go_examples), as written, without their doc comment; the task names the package and the
function and quotes the doc comment's first sentence. Python: top-level functions of 4 to 40
lines of the standard library Debian installs (test packages left out), source as written.
Every other function is shown in a markdown fence after a one-line lead-in, the rest raw.
The FAQs: every question whose whole answer is at most 1,500 characters, as the documents
write it (the Python FAQ's reStructuredText roles reduced to their text; the Debian FAQ's
plain-text rendering, its wrapped lines joined into paragraphs; an entry whose answer goes on
in sub-entries is left out). Nothing is rewritten by hand.
"""
import ast, glob, gzip, os, random, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debian_sets import write  # noqa: E402  (one writer for every set)

ROOT, GOROOT = sys.argv[1], sys.argv[2]
LEADS = ["Here is the function:", "Sure, here's an implementation:"]


def render(i, code, lang):
    if i % 2 == 0:
        return f"{LEADS[(i // 2) % 2]}\n\n```{lang}\n{code}\n```"
    return code


def go_functions():
    out = []
    src = os.path.join(GOROOT, "src")
    for path in sorted(glob.glob(os.path.join(src, "**/*.go"), recursive=True)):
        rel = os.path.relpath(path, src)
        parts = rel.split(os.sep)
        if path.endswith("_test.go") or parts[0] in ("cmd", "vendor") or "internal" in parts or "testdata" in parts or any(p.startswith("_") for p in parts):
            continue
        text = open(path, encoding="utf-8").read()
        if re.search(r"^// Code generated .* DO NOT EDIT\.$", text, re.M):
            continue
        pkg = os.path.dirname(rel)
        for m in re.finditer(r"((?:^//.*\n)*)^(func (?:\(\w* ?\*?(\w+)[^)]*\) )?(\w+)\(.*\{\n(?:.*\n)*?^\}\n)", text, re.M):
            body = m.group(2).rstrip("\n")
            n = body.count("\n") + 1
            if not 4 <= n <= 40:
                continue
            doc = " ".join(l[2:].strip() for l in m.group(1).splitlines())
            doc = re.split(r"(?<=\.)\s", doc)[0] if doc else ""
            name = (m.group(3) + "." if m.group(3) else "") + m.group(4)
            task = f"Write the Go function {name} of package {pkg}" + (f": {doc}" if doc else ".")
            out.append((f"{rel[:-3]}/{name}", task, body, "go"))
    return out


def python_functions():
    out = []
    paths = []
    for pkg in ("libpython3.11-minimal", "libpython3.11-stdlib"):
        base = os.path.join(ROOT, pkg, "usr/lib/python3.11")
        paths += [(os.path.relpath(p, base), p) for p in glob.glob(os.path.join(base, "**/*.py"), recursive=True) if os.path.isfile(p)]
    for rel, path in sorted(paths):
        parts = rel.split(os.sep)
        if parts[0] in ("test", "idlelib", "lib2to3") or "tests" in parts or "test" in parts or parts[0].startswith("site-"):
            continue
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
            task = f"Write the Python function {node.name} of module {rel[:-3].replace(os.sep, '.')}" + (f": {doc}" if doc else ".")
            out.append((rel[:-3] + "/" + node.name, task, seg, "python"))
    return out


ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(?:([^`<]*?)\s*<[^`>]*>|~?([^`]*))`")


def python_faq():
    out = []
    base = os.path.join(ROOT, "python3.11-doc/usr/share/doc/python3.11/html/_sources/faq")
    for path in sorted(glob.glob(os.path.join(base, "*.rst.txt"))):
        name = os.path.basename(path)[: -len(".rst.txt")]
        lines = open(path, encoding="utf-8").read().split("\n")
        heads = [i for i in range(len(lines) - 1) if lines[i].strip() and re.fullmatch(r"([=\-~^\"'])\1{2,}", lines[i + 1].strip())
                 and len(lines[i + 1].strip()) >= len(lines[i].strip())]
        for k, i in enumerate(heads):
            q = lines[i].strip()
            if not q.endswith("?"):
                continue
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            body = "\n".join(l for l in lines[i + 2:end] if not l.startswith(".. _") and not l.startswith(".. index"))
            body = ROLE.sub(lambda m: "`" + (m.group(1) or m.group(2) or "").lstrip("~!") + "`", body).strip()
            if body and len(body) <= 1500:
                out.append((f"{name}/{k}", q, body, "en"))
    return out


def join_lines(ls, wide):
    """Joins a paragraph's wrapped lines: with a space, except between two characters of a
    script written without spaces (Japanese, Chinese)."""
    out = ls[0]
    for l in ls[1:]:
        if wide and out and l and ord(out[-1]) >= 0x2E80 and ord(l[0]) >= 0x2E80:
            out += l
        else:
            out += " " + l
    return out


def debian_faq():
    out = []
    for pkg, lang in (("debian-faq", "en"), ("debian-faq-de", "de"), ("debian-faq-ja", "ja"), ("debian-faq-zh-cn", "zh-CN")):
        path = glob.glob(os.path.join(ROOT, pkg, "usr/share/doc/debian/FAQ/debian-faq*.txt.gz"))
        path = [p for p in path if (lang == "en") == p.endswith(".en.txt.gz") or lang != "en" and p.endswith("." + lang.lower() + ".txt.gz")]
        # The rendering indents with no-break spaces as often as with spaces.
        text = gzip.open(path[0], "rt", encoding="utf-8").read().replace("\u00a0", " ")
        lines = [l.rstrip() for l in text.split("\n")]
        # The body starts at the second "1.1." heading (the first is the table of contents).
        starts = [i for i, l in enumerate(lines) if re.match(r"^\d+(\.\d+)+\.\s", l)]
        seen, entries = set(), []
        for i in starts:
            num = lines[i].split()[0]
            if num in seen:
                entries.append(i)
            seen.add(num)
        # Headings are the ones after the table of contents: a number seen a second time.
        body_starts = [i for i in starts if i >= (entries[0] if entries else 0)]
        wide = lang in ("ja", "zh-CN")
        for k, i in enumerate(body_starts):
            title, j = [lines[i]], i + 1
            while j < len(lines) and lines[j].strip() and not lines[j].startswith("    "):
                title.append(lines[j])
                j += 1
            q = join_lines([t.strip() for t in title], wide)
            q = re.sub(r"^\d+(\.\d+)+\.\s*", "", q)
            end = body_starts[k + 1] if k + 1 < len(body_starts) else len(lines)
            body = lines[j:end]
            # Stop at a chapter heading ("Chapter 10. ...", "第 10 章 ...").
            for n, l in enumerate(body):
                if l and not l.startswith(" "):
                    body = body[:n]
                    break
            paras, cur = [], []
            for l in body + [""]:
                if not l.strip():
                    if cur:
                        paras.append(cur)
                    cur = []
                    continue
                cur.append(l[4:] if l.startswith("    ") else l)
            text_paras = []
            for p in paras:
                if all(l.startswith("  ") for l in p) and not p[0].lstrip().startswith("* "):
                    text_paras.append("\n".join(p))  # an example or a command, as shown
                else:
                    text_paras.append(join_lines([l.strip() for l in p], wide))
            ans = "\n\n".join(text_paras).strip()
            num = lines[i].split()[0]
            if k + 1 < len(body_starts) and lines[body_starts[k + 1]].split()[0].startswith(num):
                continue  # the answer goes on in the entry's own sub-entries
            if ans and len(ans) <= 1500 and q:
                out.append((f"{lang}/{i}", q, ans, lang))
    return out


rng = random.Random(32)
for name, items in (("go_stdlib", go_functions()), ("python_stdlib", python_functions())):
    rng.shuffle(items)
    rows = [{"id": id, "input": task, "output": render(i, code, lang), "label": "correct", "lang": "en"}
            for i, (id, task, code, lang) in enumerate(items[:200])]
    write(name, rows)
for name, items in (("python_faq", python_faq()), ("debian_faq", debian_faq())):
    write(name, [{"id": id, "input": q, "output": a, "label": "correct", "lang": lang} for id, q, a, lang in items])
