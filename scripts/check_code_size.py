#!/usr/bin/env python3
"""Checks that no function under src/ is longer than --max-function lines and
no file longer than --max-file lines (docs/design.md, "Conventions").

A function's length counts the lines from its body's opening brace to its
closing brace, both included; a lambda or a local class counts as part of
the function it sits in. Functions are found by their braces: a block opened
at namespace or class scope whose head (the text since the previous `;`, `{`
or `}`) ends a parameter list (`... ) const {`, `... ) -> T {`, a
constructor's `) : a_(x), b_(y) {`) is a function body; namespace, class,
struct, union and enum bodies are scopes; anything else (an initialiser) is
skipped whole. Comments, strings and character literals are blanked first.

  check_code_size.py --root DIR [--max-function 120] [--max-file 800]
  check_code_size.py --self-test   # proves the check finds each kind of excess

Exit 0 when everything is within the limits; 1 with one line per excess,
longest first.
"""
import argparse
import os
import re
import sys
import tempfile

SCOPE_HEAD = re.compile(r'\b(namespace|class|struct|union|enum)\b|extern\s+"C"')
FUNCTION_HEAD = re.compile(r'\)\s*(const\b|noexcept\b|override\b|final\b|mutable\b|&|\s)*(->[^{}]*)?$')
CTOR_INIT = re.compile(r'\)\s*(noexcept\s*)?:\s*[\w:]+\s*[({]', re.S)


def blank(text):
    """Replaces comments, string and character literals by spaces, keeping newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(')' + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * (min(j, n) - i - 1) + (c if j < n else ''))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(text):
    """Yields (first line, last line, head) of every function body in C++ source `text`."""
    code = blank(text)
    stack = []  # (kind, line) per open brace: 'scope', 'function' or 'other'
    head_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == '\n':
            line += 1
        elif c == '{':
            head = code[head_start:i]
            enclosing = [k for k, _, _ in stack]
            if all(k == 'scope' for k in enclosing):
                if SCOPE_HEAD.search(head) and '(' not in head.split('{')[0].split('=')[0]:
                    kind = 'scope'
                elif FUNCTION_HEAD.search(head.rstrip()) or CTOR_INIT.search(head):
                    kind = 'function'
                else:
                    kind = 'other'
            else:
                kind = 'other'
            name = re.search(r'([\w:~]+)\s*\(', head)
            stack.append((kind, line, name.group(1) if name else '?'))
            head_start = i + 1
        elif c == '}':
            if stack:
                kind, first, head = stack.pop()
                if kind == 'function':
                    yield first, line, head
            head_start = i + 1
        elif c == ';':
            head_start = i + 1
        elif c == ':' and stack and all(k == 'scope' for k, _, _ in stack) and \
                re.search(r'\b(public|private|protected)\s*$', code[head_start:i]):
            head_start = i + 1


def check(root, max_function, max_file):
    problems = []
    src = os.path.join(root, 'src')
    for folder, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(('.cc', '.h')):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding='utf-8') as f:
                text = f.read()
            lines = text.count('\n')
            if lines > max_file:
                problems.append((lines, f'{rel}: {lines} lines, more than {max_file}; split it by concern'))
            for first, last, head in functions(text):
                length = last - first + 1
                if length > max_function:
                    problems.append((length, f'{rel}:{first}: {head}() has {length} lines, more than {max_function}; '
                                             'split it into named steps'))
    problems.sort(key=lambda p: -p[0])
    return [p[1] for p in problems]


def self_test():
    body = '\n'.join('  x += 1;' for _ in range(5))
    cases = {
        'a function too long': (f'namespace a {{\nint F(int x) {{\n{body}\n  return x;\n}}\n}}\n', 1),
        'a method too long': (f'class C {{\n public:\n  int G() const {{\n{body}\n  }}\n}};\n', 1),
        'a constructor too long': (f'struct S {{\n  S(int y) : y_(y), z_(y) {{\n{body}\n  }}\n  int y_, z_;\n}};\n', 1),
        'a lambda counts in its function': (f'void H() {{\n  auto f = [&](int x) {{\n{body}\n  }};\n}}\n', 1),
        'an initialiser is not a function': (f'const int kT[] = {{\n{body.replace("x += 1;", "1,")}\n}};\n', 0),
        'braces in strings and comments': ('void K() {\n  // {{{{\n  const char* s = "{{{{";\n}\n', 0),
        'a file too long': ('\n' * 12, 1),
    }
    failed = 0
    for name, (text, want) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, 'src', 'm'))
            with open(os.path.join(root, 'src', 'm', 'f.cc'), 'w', encoding='utf-8') as f:
                f.write(text)
            got = len(check(root, max_function=6, max_file=10))
        if got != want:
            print(f'self-test: {name}: {got} excess(es) found, expected {want}')
            failed = 1
    if not failed:
        print(f'self-test: {len(cases)} cases as expected')
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default='.')
    ap.add_argument('--max-function', type=int, default=120)
    ap.add_argument('--max-file', type=int, default=800)
    ap.add_argument('--self-test', action='store_true')
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    problems = check(a.root, a.max_function, a.max_file)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
