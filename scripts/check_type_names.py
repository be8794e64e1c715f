#!/usr/bin/env python3
"""No two class types with external linkage share a qualified name.

Two definitions of `hetplan::X` in different files are an ODR violation the
linker does not report: each translation unit's inline members (a vector's
relocation, a destructor) are merged by name, and one file's code then runs
on the other's layout. It crashed `hetplan reproduce`'s report once
(app/frontier.h and report/frontier_plots.h both defined FrontierFile).

The check reads every .h and .cc under include/ and src/ in the project's
style (namespaces not indented, closed by `}  // namespace ...`): a type
defined at column 0 inside named namespaces only, not an anonymous one.

  check_type_names.py --root DIR      exit 1 and one line per clash
  check_type_names.py --self-test     shows the check finds a clash
"""
import argparse
import os
import re
import sys
import tempfile

OPEN = re.compile(r"^(?:inline\s+)?namespace(?:\s+([\w:]+))?\s*\{")
CLOSE = re.compile(r"^\}\s*//\s*namespace")
TYPE = re.compile(r"^(?:template\s*<[^>]*>\s*)?(?:struct|class|union|enum(?:\s+class|\s+struct)?)\s+"
                  r"(?:\[\[[^\]]*\]\]\s*)?(\w+)\s*(?:final\s*)?(?::[^;{]*)?\{")


def definitions(path):
    """(qualified name, line) of each type with external linkage in `path`."""
    stack = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = OPEN.match(line)
            if m:
                stack.append(m.group(1) or "")
                continue
            if CLOSE.match(line):
                if stack:
                    stack.pop()
                continue
            m = TYPE.match(line)
            if m and stack and "" not in stack:
                yield "::".join(stack + [m.group(1)]), number


def clashes(root):
    seen = {}
    out = []
    for top in ("include", "src"):
        for d, _, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(d, name)
                rel = os.path.relpath(path, root)
                for qual, line in definitions(path):
                    if qual in seen and seen[qual][0] != rel:
                        out.append(f"{rel}:{line}: {qual} is also defined in {seen[qual][0]}:{seen[qual][1]}; "
                                   f"rename one (two definitions of one name break the ODR silently)")
                    else:
                        seen.setdefault(qual, (rel, line))
    return out


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "include", "a"))
        os.makedirs(os.path.join(root, "src", "b"))
        with open(os.path.join(root, "include", "a", "x.h"), "w") as f:
            f.write("namespace hetplan {\nstruct Clash {\n  int a;\n};\n}  // namespace hetplan\n")
        with open(os.path.join(root, "src", "b", "y.cc"), "w") as f:
            f.write("namespace hetplan {\nnamespace {\nstruct Clash {};\n}  // namespace\n"
                    "struct Clash : Base {\n};\n}  // namespace hetplan\n")
        found = clashes(root)
        if len(found) != 1 or "hetplan::Clash" not in found[0] or "y.cc:5" not in found[0]:
            print("self-test: expected one clash at y.cc:5, got", found)
            return 1
    print("self-test: the clash is found, the anonymous namespace's type is not")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    found = clashes(a.root)
    for line in found:
        print(line)
    if not found:
        print("no two types with external linkage share a name")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
