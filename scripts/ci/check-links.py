#!/usr/bin/env python3
"""Check the links of FitBase's documentation: every relative link and #anchor resolves.

    scripts/ci/check-links.py [FILE.md ...]

Without arguments it checks README.md and every docs/*.md. For each Markdown link or image outside code
(`[text](target)`, `![alt](target)`, `[label]: target`, `<a href>` / `<img src>`) whose target is not a URL, the file
or directory it names must exist, relative to the page; an `#anchor` on a Markdown page (or alone, for the page itself)
must match one of that page's headings under GitHub's rules: lower-cased, everything but letters, digits, `_`, `-`
and spaces dropped, spaces made `-`, and a repeated heading's slug suffixed `-1`, `-2`, …. With the default files it
also checks that every docs/*.md page is linked from README.md. Prints each broken link as `file:line: target
(why)` and exits 1 when there is one. Standard library only.
"""
import bisect
import os
import re
import sys
from urllib.parse import unquote

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]\n]|\n(?![ \t]*\n)|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]*)\"", re.IGNORECASE)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
ANCHORS = {}  # a Markdown file's path → the anchors its headings define


def prose_lines(text):
    """(line number, line, line with its code spans blanked) for every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), start=1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not line.strip()[len(match.group(1)):].strip():
                fence = None
            continue
        yield number, line, re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's Markdown text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link or image counts by its text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "").replace("*", "")  # code spans and emphasis markers
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path):
    """The anchors a Markdown file's headings define."""
    if path not in ANCHORS:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as handle:
            for _, line, _ in prose_lines(handle.read()):
                match = HEADING.match(line)
                if not match:
                    continue
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        ANCHORS[path] = found
    return ANCHORS[path]


def links(text):
    """(line number, target) of every link outside code, a link's text may run over several lines."""
    prose = {number: blanked for number, _, blanked in prose_lines(text)}
    lines = [prose.get(number, "") for number in range(1, text.count("\n") + 2)]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    joined = "\n".join(lines)
    found = []
    for pattern in (INLINE_LINK, HTML_LINK):
        found += [(bisect.bisect_right(starts, match.start(1)), match.group(1)) for match in pattern.finditer(joined)]
    for number, line in enumerate(lines, start=1):
        match = REFERENCE_DEFINITION.match(line)
        if match:
            found.append((number, match.group(1)))
    return sorted(found)


def check(page):
    """One page's broken links (as messages), the repository-relative files it links to, and how many links it has."""
    problems, linked = [], set()
    with open(page, encoding="utf-8") as handle:
        found = list(links(handle.read()))
    where = os.path.relpath(page, ROOT)
    for number, target in found:
        if not target or URL_SCHEME.match(target) or target.startswith("//"):
            continue
        path, _, anchor = target.partition("#")
        path = unquote(path.split("?", 1)[0])
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(resolved):
            problems.append(f"{where}:{number}: {target} (no such file: {os.path.relpath(resolved, ROOT)})")
            continue
        linked.add(os.path.relpath(resolved, ROOT))
        if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
            if unquote(anchor).lower() not in anchors(resolved):
                problems.append(f"{where}:{number}: {target} (no heading with anchor #{anchor} in "
                                f"{os.path.relpath(resolved, ROOT)})")
    return problems, linked, len(found)


def main(arguments):
    defaults = not arguments
    if defaults:
        docs = os.path.join(ROOT, "docs")
        pages = [os.path.join(ROOT, "README.md")] + sorted(
            os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))
    else:
        pages = [os.path.abspath(argument) for argument in arguments]
    problems, count = [], 0
    for page in pages:
        broken, linked, links_on_page = check(page)
        problems += broken
        count += links_on_page
        if defaults and page == pages[0]:
            unlinked = [os.path.relpath(other, ROOT) for other in pages[1:]
                        if os.path.relpath(other, ROOT) not in linked]
            problems += [f"README.md: does not link to {name}" for name in unlinked]
    for problem in problems:
        print(problem)
    names = ", ".join(os.path.relpath(page, ROOT) for page in pages) if len(pages) < 4 else f"{len(pages)} pages"
    if problems:
        print(f"check-links: {len(problems)} problem(s) in {names}")
        return 1
    print(f"check-links: {count} links in {names}, every relative link and anchor resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
