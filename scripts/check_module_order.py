#!/usr/bin/env python3
"""Checks the library's declared module order (src/README.md) on every include.

Modules are folders src/<m>/ (sources and private headers) and
include/hetplan/<m>/ (public headers), listed bottom to top. A file of module
m may include:
  * public headers of m and of every module below it (hetplan/<x>/...);
  * private headers (src/<x>/...) of m itself, and of the internal modules
    below m (--internal, e.g. ort: ONNX Runtime plumbing shared by cost and
    deploy); never another module's private headers;
  * nothing private at all from a public header.
It also confines third-party headers: CBC's only to the CBC driver, ONNX
Runtime's only to the modules that run models. `cli` sits on top and may use
every public header.

  check_module_order.py --root DIR --order util graph ... [--internal ort]
  check_module_order.py --self-test    # proves the check fails on a back-edge

Exit 0 when every include respects the order; 1 with one line per violation.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# Third-party headers and where they may appear (paths relative to the root).
CONFINED = [
    (re.compile(r'^(Cbc|Clp|Coin|Osi|Cgl)\w*\.hpp$'), {'src/solve/mip/cbc_driver.cc'}, 'CBC'),
    (re.compile(r'^onnxruntime'), {'src/ort/', 'src/cost/', 'src/deploy/'}, 'ONNX Runtime'),
    (re.compile(r'^openvino/'), {'src/ov/'}, 'OpenVINO'),
]


def module_of(rel):
    parts = rel.split('/')
    if parts[0] == 'src' and len(parts) >= 3:
        return parts[1], False
    if parts[0] == 'include' and len(parts) >= 4 and parts[1] == 'hetplan':
        return parts[2], True
    return None, None


def target_of(rel, quote, inc, rank):
    """The module an include names and whether that header is public, for
    every form: "hetplan/<m>/..." and <hetplan/<m>/...> (public), "<m>/..."
    (a private header of m), and paths relative to the including file
    ("../deploy/run_internal.h", "x.h"). (None, None) for other headers."""
    parts = inc.split('/')
    if parts[0] == 'hetplan':
        return (parts[1] if len(parts) >= 3 else '?'), True
    if quote != '"':
        return None, None
    if parts[0] in rank and len(parts) >= 2:
        return parts[0], False
    resolved = os.path.normpath(os.path.join(os.path.dirname(rel), inc)).replace(os.sep, '/')
    return module_of(resolved)


def check(root, order, internal):
    rank = {m: i for i, m in enumerate(order)}
    rank['cli'] = len(order)
    problems = []
    for top in ('src', 'include/hetplan'):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(('.h', '.cc')):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root).replace(os.sep, '/')
                mod, public = module_of(rel)
                if mod is None:
                    continue
                if mod not in rank:
                    problems.append(f'{rel}: module {mod!r} is not in the declared order; add it to '
                                    'HETPLAN_MODULES (CMakeLists.txt) and src/README.md')
                    continue
                with open(path, encoding='utf-8', errors='replace') as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        quote, inc = m.groups()
                        where = f'{rel}:{lineno}'
                        for pattern, allowed, what in CONFINED:
                            if pattern.search(os.path.basename(inc)) and quote == '<':
                                if not any(rel == a or (a.endswith('/') and rel.startswith(a)) for a in allowed):
                                    problems.append(f'{where}: includes {what}\'s <{inc}>; only '
                                                    f'{", ".join(sorted(allowed))} may')
                        target, target_public = target_of(rel, quote, inc, rank)
                        if target is None:
                            continue
                        if target not in rank:
                            problems.append(f'{where}: includes "{inc}" of unknown module {target!r}')
                        elif target_public:
                            if rank[target] > rank[mod]:
                                problems.append(f'{where}: {mod} includes "{inc}" of {target}, which is above it '
                                                f'in the declared order ({" < ".join(order)})')
                        elif public:
                            problems.append(f'{where}: public header includes private "{inc}"; public headers '
                                            'may include only public ones')
                        elif target != mod and not (target in internal and rank[target] < rank[mod]):
                            problems.append(f'{where}: {mod} includes "{inc}", a private header of {target}; '
                                            'use its public header, or make the shared code an internal module')
    return problems


def self_test():
    """A tiny tree with one back-edge and one foreign private include: both must be reported."""
    tmp = tempfile.mkdtemp(prefix='hetplan-order-')
    try:
        def write(rel, text):
            p = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'w', encoding='utf-8') as fh:
                fh.write(text)
        write('include/hetplan/low/a.h', '#pragma once\n#include "hetplan/high/b.h"\n')  # back-edge
        write('include/hetplan/high/b.h', '#pragma once\n#include "hetplan/low/a.h"\n')
        write('src/high/c.cc', '#include "low/private.h"\n')  # another module's private header
        write('src/low/private.h', '#pragma once\n')
        # The same two in the other include forms: angle brackets, and paths
        # relative to the including file.
        write('src/low/d.cc', '#include <hetplan/high/b.h>\n')
        write('src/low/e.cc', '#include "../../include/hetplan/high/b.h"\n')
        write('src/high/f.cc', '#include "../low/private.h"\n')
        write('include/hetplan/high/g.h', '#pragma once\n#include "../../../src/high/h.h"\n')  # public -> private
        write('src/high/h.h', '#pragma once\n')
        # Allowed: a header of the same folder by its bare name, and downward.
        write('src/low/i.cc', '#include "private.h"\n#include <hetplan/low/a.h>\n')
        bad = check(tmp, ['low', 'high'], set())
        expected = {'include/hetplan/low/a.h:2': 'above it', 'src/high/c.cc:1': 'private header',
                    'src/low/d.cc:1': 'above it', 'src/low/e.cc:1': 'above it', 'src/high/f.cc:1': 'private header',
                    'include/hetplan/high/g.h:2': 'public header includes private'}
        found = {line.split(': ')[0]: line for line in bad}
        missed = [f'{w} ({what})' for w, what in expected.items() if what not in found.get(w, '')]
        if missed or len(bad) != len(expected):
            print('self-test: the check missed', missed, 'or reported more:', bad, file=sys.stderr)
            return 1
        # And through the command line, as CTest runs it: exit status 1.
        rc = subprocess.run([sys.executable, __file__, '--root', tmp, '--order', 'low', 'high'],
                            capture_output=True, text=True).returncode
        if rc != 1:
            print(f'self-test: exit status {rc} on a tree with back-edges, expected 1', file=sys.stderr)
            return 1
        print(f'self-test: {len(expected)} back-edges and private includes, quoted, angle-bracketed and relative, '
              'are all reported (exit 1)')
        return 0
    finally:
        shutil.rmtree(tmp)


def readme_problems(path, readme, root, order):
    """The module table (the README's first table) must list the build's
    order, and every room (a sub-folder of a module, e.g. solve/exact/) must
    be named in the README as `<module>/<room>/`."""
    first_table = re.search(r'(^\|.*\n)+', readme, re.M)
    listed = re.findall(r'^\|\s*`(\w+)/`', first_table.group(0) if first_table else '', re.M)
    listed = [m for m in listed if m != 'cli']
    problems = []
    if listed != order:
        problems.append(f'{path}: lists the modules as {" < ".join(listed)}, but the build declares '
                        f'{" < ".join(order)}; make them agree')
    for m in order:
        folder = os.path.join(root, 'src', m)
        rooms = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d))) \
            if os.path.isdir(folder) else []
        for r in rooms:
            if f'`{m}/{r}/`' not in readme:
                problems.append(f'{path}: src/{m}/{r}/ is not described; add a row `{m}/{r}/` to its rooms table')
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root')
    ap.add_argument('--order', nargs='+')
    ap.add_argument('--internal', nargs='*', default=[])
    ap.add_argument('--readme', help='src/README.md: its order must match --order')
    ap.add_argument('--self-test', action='store_true')
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.root or not a.order:
        ap.error('--root and --order are required')
    problems = check(a.root, a.order, set(a.internal))
    if a.readme:
        with open(a.readme, encoding='utf-8') as fh:
            readme = fh.read()
        problems += readme_problems(a.readme, readme, a.root, a.order)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} problem(s) with the declared module order', file=sys.stderr)
        return 1
    print(f'module order ok: {" < ".join(a.order)} < cli')
    return 0


if __name__ == '__main__':
    sys.exit(main())
