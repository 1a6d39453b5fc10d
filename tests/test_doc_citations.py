#!/usr/bin/env python3
"""Comments and documents cite only what the repository holds.

Two checks over the sources (code, build files, docs):
- no citation of the design notes that live outside the repository (a
  clone does not have them): `reference/...`, `DESIGN.md`, `STYLE.md`, or a
  bare `clock-model.md` / `formats.md` / `sql-surface.md` without `docs/`;
- every section cited as `docs/NAME.md §N` (also `§N-§M`, `§N, §M`) is a
  heading of that file (`## N.` or `### N.M`), so the section numbers the
  code leans on stay true when a document changes.

usage: test_doc_citations.py SOURCE_ROOT
"""
import pathlib
import re
import sys

SCANNED_DIRS = ["core", "plugins", "include", "tools", "tests", "proto",
                "config", "docs"]
SCANNED_SUFFIXES = {".c", ".h", ".py", ".sh", ".md", ".build", ".sql"}
FORBIDDEN = [
    (re.compile(r"reference/"), "the out-of-tree reference notes"),
    (re.compile(r"DESIGN\.md"), "the out-of-tree design notes"),
    (re.compile(r"STYLE\.md"), "the out-of-tree style notes"),
    (re.compile(r"(?<![\w/-])(?:clock-model|formats|sql-surface)\.md"),
     "a document without its docs/ path"),
]
CITATION = re.compile(r"docs/([a-z0-9-]+)\.md")
# What may follow a citation: section numbers, ranges and lists of them.
SECTIONS = re.compile(
    r"(?:\s*(?:,|;|-|–)?\s*§\s*\d+(?:\.\d+)*(?:\s*(?:-|–)\s*§?\s*\d+(?:\.\d+)*)?)+")
NUMBER = re.compile(r"\d+(?:\.\d+)*")
HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)*)\.? ", re.MULTILINE)


def scanned_files(root):
    """The sources, but for test data and this file (which names what it
    looks for)."""
    files = [root / "README.md", root / "meson.build"]
    for d in SCANNED_DIRS:
        for p in sorted((root / d).rglob("*")):
            if p.is_file() and p.suffix in SCANNED_SUFFIXES and \
                    "data" not in p.relative_to(root).parts and \
                    p.name != pathlib.Path(__file__).name:
                files.append(p)
    return files


def unwrap(text):
    """Joins comment continuation lines, so a citation cut by a line end
    reads as one."""
    return re.sub(r"\n[ \t]*(?:\*(?!/)|#|//)?[ \t]*", " ", text)


def main():
    root = pathlib.Path(sys.argv[1])
    headings = {}
    failures = []
    checked = 0
    for path in scanned_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        name = path.relative_to(root)
        for number, line in enumerate(text.splitlines(), 1):
            for pattern, what in FORBIDDEN:
                if pattern.search(line):
                    failures.append(f"{name}:{number}: cites {what}: {line.strip()}")
        flat = unwrap(text)
        for match in CITATION.finditer(flat):
            sections = SECTIONS.match(flat, match.end())
            if not sections:
                continue
            doc = match.group(1)
            if doc not in headings:
                doc_path = root / "docs" / f"{doc}.md"
                if not doc_path.is_file():
                    failures.append(f"{name}: cites docs/{doc}.md, which does not exist")
                    headings[doc] = set()
                    continue
                headings[doc] = set(HEADING.findall(doc_path.read_text(encoding="utf-8")))
            for section in NUMBER.findall(sections.group(0)):
                checked += 1
                if section not in headings[doc]:
                    failures.append(f"{name}: cites docs/{doc}.md §{section}, "
                                    "which has no such section")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    if checked == 0:
        print("FAIL: no section citation found; the scan is broken", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {checked} section citations, each of a section that exists")


main()
