#!/usr/bin/env python3
"""Builds the corpus sets taken from Debian packages' translations (gnome_help,
product_failures, product_permission, null_templates) into ../testdata/<set>/cases.jsonl.

    mkdir -p /tmp/deb && cd /tmp/deb && apt-get download gnome-user-docs pidgin-data geary \
        gnome-maps gnome-weather gnome-software-common epiphany-browser-data \
        glib-networking-common gnome-control-center-data libc-l10n
    for f in *.deb; do mkdir -p x/${f%%_*}; dpkg-deb -x $f x/${f%%_*}; done
    python3 internal/corpus/tools/debian_sets.py /tmp/deb/x

Nothing is rewritten by hand: titles, paragraphs and messages are the packages' own text
(gettext catalogues read with Python's gettext module, help pages parsed as Mallard XML).
The versions read are in each set's SOURCE.txt.
"""
import gettext, glob, json, os, re, sys
import xml.etree.ElementTree as ET

ROOT = sys.argv[1]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata")
M = "{http://projectmallard.org/1.0/}"


def lang_code(d):
    return {"C": "en", "pt_BR": "pt-BR", "zh_CN": "zh-CN", "zh_TW": "zh-TW", "sr@latin": "sr-Latn"}.get(d, d.replace("_", "-"))


def text_of(el):
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def help_page(path, limit=600):
    """The page's title and its first blocks (paragraphs, list items as "- "), whole
    blocks only, up to limit characters."""
    page = ET.parse(path).getroot()
    title = page.find(M + "title")
    if title is None:
        return None, None
    blocks = []
    def walk(el):
        for ch in el:
            tag = ch.tag.replace(M, "")
            if tag in ("info", "title", "media", "note", "comment", "figure", "links", "terms", "table"):
                continue
            if tag == "p":
                blocks.append(text_of(ch))
            elif tag == "item":
                ps = [text_of(p) for p in ch.iter(M + "p")]
                if ps:
                    blocks.append("- " + " ".join(ps))
            elif tag in ("list", "steps", "section", "div"):
                if tag == "section":
                    t = ch.find(M + "title")
                    if t is not None:
                        blocks.append(text_of(t))
                walk(ch)
    walk(page)
    out = []
    n = 0
    for b in blocks:
        if not b:
            continue
        if out and n + len(b) > limit:
            break
        out.append(b)
        n += len(b) + 1
    return text_of(title), "\n".join(out)


HELP_PAGES = ["user-admin-problems", "user-admin-explain", "net-othersedit", "net-othersconnect", "music-cantplay-drm",
              "net-wireless-noconnection", "power-whydim", "video-dvd", "sound-nosound", "net-what-is-ip-address",
              "bluetooth-problem-connecting", "power-suspendfail"]
# Pages whose titles (tasks, not problems) stand for the user's request in the message sets.
REQUEST_PAGES = ["net-wireless-connect", "files-search", "clock-set", "contacts-search", "nautilus-connect", "user-add",
                 "sound-volume", "files-share", "shell-apps-open"]


def write(set_name, rows):
    d = os.path.join(OUT, set_name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cases.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(set_name, len(rows), "rows")


def build_help():
    base = os.path.join(ROOT, "gnome-user-docs/usr/share/help")
    rows, titles = [], {}
    english = {}
    for page in HELP_PAGES:
        english[page] = help_page(os.path.join(base, "C/gnome-help", page + ".page"))
    for d in sorted(os.listdir(base)):
        lang = lang_code(d)
        for page in HELP_PAGES:
            p = os.path.join(base, d, "gnome-help", page + ".page")
            if not os.path.exists(p):
                continue
            title, body = help_page(p)
            if not title or not body:
                continue
            if d != "C" and (title == english[page][0] or body == english[page][1]):
                continue  # not translated: the page falls back to English
            rows.append({"id": f"{lang}/{page}", "input": title, "output": body, "label": "correct", "lang": lang})
        for page in REQUEST_PAGES:
            p = os.path.join(base, d, "gnome-help", page + ".page")
            if os.path.exists(p):
                title, _ = help_page(p)
                titles.setdefault(lang, {})[page] = title
    write("gnome_help", rows)
    return titles


def catalogs(pkg, domain):
    out = {}
    for mo in glob.glob(os.path.join(ROOT, pkg, "usr/share/locale/*/LC_MESSAGES", domain + ".mo")):
        d = mo.split("/")[-3]
        with open(mo, "rb") as f:
            out[lang_code(d)] = gettext.GNUTranslations(f)._catalog
    return out


# Product messages that report a failure in a plain sentence, without a stack trace.
FAILURES = [
    ("pidgin-data", "pidgin", "The server is unavailable; try again later"),
    ("pidgin-data", "pidgin", "Connection timed out."),
    ("pidgin-data", "pidgin", "An error occurred while opening the file."),
    ("pidgin-data", "pidgin", "Could not connect to the remote party"),
    ("geary", "geary", "Could not connect, check your network"),
    ("geary", "geary", "This account has encountered a problem and is unavailable"),
    ("gnome-maps", "gnome-maps", "Failed to connect to location service"),
    ("gnome-weather", "org.gnome.Weather", "Forecast not Available"),
    ("gnome-software-common", "gnome-software", "Internet access was required but wasn’t available. Please make sure that you have internet access and try again."),
    ("gnome-software-common", "gnome-software", "We’re sorry: the update failed to install. Please wait for another update and try again. If the problem persists, contact your software provider."),
    ("gnome-software-common", "gnome-software", "Sorry, something went wrong"),
    ("epiphany-browser-data", "epiphany", "Something went wrong, please try again later."),
    ("epiphany-browser-data", "epiphany", "The server may be busy or you may have a network connection problem. Try again later."),
    ("glib-networking-common", "glib-networking", "The operation timed out"),
]

# Product messages that refuse an action for want of permission.
PERMISSION = [
    ("gnome-control-center-data", "gnome-control-center-2.0", "you do not have permission to perform the action"),
    ("gnome-control-center-data", "gnome-control-center-2.0", "You are not allowed to access the device. Contact your system administrator."),
    ("gnome-control-center-data", "gnome-control-center-2.0", "Operation not allowed"),
    ("gnome-software-common", "gnome-software", "Unable to download updates: you do not have permission to install software"),
    ("gnome-software-common", "gnome-software", "Unable to install updates: you do not have permission to update software"),
    ("epiphany-browser-data", "epiphany", "You do not have permission to create files in this directory."),
    ("libc-l10n", "libc", "Operation not permitted"),
    ("libc-l10n", "libc", "Permission denied"),
]

# Which help page's title stands for the user's request in each message's product.
REQUEST_PAGE = {"pidgin": "contacts-search", "geary": "files-share", "gnome-maps": "nautilus-connect",
                "org.gnome.Weather": "clock-set", "gnome-software": "shell-apps-open", "epiphany": "files-search",
                "glib-networking": "net-wireless-connect", "gnome-control-center-2.0": "user-add", "libc": "sound-volume"}


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40]


def build_messages(set_name, msgs, label, titles):
    rows = []
    for pkg, domain, msgid in msgs:
        cats = catalogs(pkg, domain)
        cats["en"] = {msgid: msgid}
        for lang in sorted(cats):
            s = cats[lang].get(msgid)
            if not s or (lang != "en" and s == msgid):
                continue
            s = s.replace("_", "") if s.count("_") == 1 else s
            page = REQUEST_PAGE[domain]
            en = titles["en"][page]
            req = titles.get(lang, {}).get(page) or en
            if lang != "en" and req == en:
                req = en  # the page is not translated: the request stays in English
            rows.append({"id": f"{lang}/{domain}/{slug(msgid)}", "input": req, "output": s.strip(), "label": label, "lang": lang,
                         "model": f"{pkg}:{domain}"})
    write(set_name, rows)


# Templates with one value slot (a name or a count) that a program fills in. Rendered
# with a value they are a correct message; rendered with a null (a missing value
# serialized by the language that built the string) they are the leak.
TEMPLATES = [
    ("pidgin-data", "pidgin", "%s has signed on.", "Maria"),
    ("pidgin-data", "pidgin", "%s has signed off.", "Maria"),
    ("pidgin-data", "pidgin", "%s has gone away.", "Maria"),
    ("pidgin-data", "pidgin", "%s has sent you a file.", "Maria"),
    ("gnome-software-common", "gnome-software", "%s is now installed", "Firefox"),
    ("epiphany-browser-data", "epiphany", "“%s” is ready to be used", "Firefox"),
]
NULLS = ["undefined", "None", "null", "NaN", "nil", "[object Object]"]


def build_nulls():
    rows = []
    k = 0
    for pkg, domain, msgid, value in TEMPLATES:
        cats = catalogs(pkg, domain)
        cats["en"] = {msgid: msgid}
        for lang in sorted(cats):
            s = cats[lang].get(msgid)
            if not s or (lang != "en" and s == msgid) or s.count("%s") != 1 and not re.search(r"%1\$s", s):
                continue
            s = re.sub(r"%(1\$)?s", "\x00", s)
            if s.count("\x00") != 1:
                continue
            null = NULLS[k % len(NULLS)]
            k += 1
            base = f"{lang}/{domain}/{slug(msgid)}"
            req = "What just happened?"
            rows.append({"id": base + "/value", "input": req, "output": s.replace("\x00", value).strip(), "label": "correct", "lang": lang, "model": f"{pkg}:{domain}"})
            rows.append({"id": base + "/null", "input": req, "output": s.replace("\x00", null).strip(), "label": "placeholder", "lang": lang, "model": f"{pkg}:{domain}"})
    write("null_templates", rows)


# Neutral messages of the same programs: sentences that report no failure and refuse
# nothing ("Send a message to the selected buddy", "Show the weather forecast"). They train
# and test the notice model's false alarms on the register of program messages (the
# failure and permission sets come from the same catalogues, so without them "a short
# translated GNOME sentence" would be all the model learns). One row per message, with its
# translations.
NOT_NEUTRAL = re.compile(r"(error|fail|unable|could|cannot|can.t|not |n.t |denied|permi|unavailab|time[ds]? ?out|invalid|wrong|problem|"
                         r"sorry|\bno\b|missing|unknown|refus|forbid|lost|disconnect|abort|crash|expire|too many|busy|offline|again|"
                         r"retry|warn|allow|author|privile|access|block|reject|unsupported|incorrect|bad |broken|corrupt|cancel|"
                         r"stop|kill|delete|remov|quit|exit|close|lock|secur|password|certificate|untrusted|large|detect|big|bug|illegal|"
                         r"requir|attack|fallback|menu of|slot|abbreviation|too short|too long|already exist|fill out|damage)", re.I)


def build_neutral():
    rows = []
    for pkg, domain in [("pidgin-data", "pidgin"), ("geary", "geary"), ("gnome-maps", "gnome-maps"),
                        ("gnome-weather", "org.gnome.Weather"), ("gnome-software-common", "gnome-software"),
                        ("epiphany-browser-data", "epiphany"), ("gnome-control-center-data", "gnome-control-center-2.0")]:
        cats = catalogs(pkg, domain)
        counts = {}
        for lang, cat in cats.items():
            for mid, ms in cat.items():
                if (isinstance(mid, str) and ms and ms != mid and 20 <= len(mid) <= 110 and " " in mid and mid[0].isupper()
                        and not re.search(r"[%{}<>_&$\\|/@\x04]|\.\.\.|\n", mid) and not NOT_NEUTRAL.search(mid)):
                    counts[mid] = counts.get(mid, 0) + 1
        best = sorted(counts, key=lambda m: (-counts[m], m))[:8]
        for mid in best:
            tr = {"en": mid}
            for lang in sorted(cats):
                s = cats[lang].get(mid)
                if s and s != mid and "\n" not in s:
                    tr[lang] = s.replace("_", "") if s.count("_") == 1 else s
            rows.append({"id": f"{domain}/{slug(mid)}", "domain": domain, "translations": tr})
    write("catalog_neutral", rows)


if __name__ == "__main__":
    titles = build_help()
    build_messages("product_failures", FAILURES, "error", titles)
    build_messages("product_permission", PERMISSION, "refusal", titles)
    build_nulls()
    build_neutral()
