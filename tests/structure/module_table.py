#!/usr/bin/env python3
"""The module table of docs/design.md, CMake's declared dependencies and the code's includes agree.

For each module (a folder under src/ with a saturate_module() line in CMakeLists.txt):
- the table's "depends on" column names exactly the modules its saturate_module() line declares (sat_<name>);
- every module its non-test files include from is declared, directly or through a declared module;
- every declared module is used: included from, directly;
- the measurement core (src/core) includes no command's module, in any file, its tests included: probe and tune
  stand on it, never the other way round.
Any disagreement fails with the module and what differs.
"""
import os
import re
import sys

root = os.environ.get("SATURATE_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
cmake = open(os.path.join(root, "CMakeLists.txt")).read()
declared = {}
for m in re.finditer(r"saturate_module\((\w+)((?:[^()]|\([^()]*\))*)\)", cmake):
    name, rest = m.group(1), m.group(2)
    if name == "name":  # the function's own definition
        continue
    declared[name] = set(re.findall(r"\bsat_(\w+)", rest))

table = {}
design = open(os.path.join(root, "docs", "design.md")).read()
for line in design.splitlines():
    row = re.match(r"\|\s*`(\w+)`\s*\|[^|]*\|\s*([^|]*)\|\s*$", line)
    if row and row.group(1) in declared:
        deps = row.group(2).strip()
        table[row.group(1)] = set() if deps in ("—", "-", "") else {d.strip() for d in deps.split(",")}

used = {}
for name in declared:
    folder = os.path.join(root, "src", name)
    found = set()
    for f in os.listdir(folder):
        if f.endswith("_test.cc") or not f.endswith((".cc", ".h")) or f.startswith("test_"):
            continue
        for inc in re.findall(r'#include "(\w+)/', open(os.path.join(folder, f)).read()):
            if inc != name:
                found.add(inc)
    used[name] = found


def closure(name, seen=None):
    seen = set() if seen is None else seen
    for d in declared.get(name, ()):
        if d not in seen:
            seen.add(d)
            closure(d, seen)
    return seen


problems = []
for name in sorted(declared):
    if name not in table:
        problems.append(f"{name}: no row in docs/design.md's module table")
    elif name != "cli" and table[name] != declared[name]:
        problems.append(f"{name}: docs/design.md says it depends on {sorted(table[name]) or 'nothing'}, "
                        f"CMakeLists.txt declares {sorted(declared[name]) or 'nothing'}")
    undeclared = used[name] - closure(name)
    if undeclared:
        problems.append(f"{name}: includes from {sorted(undeclared)} without declaring them in CMakeLists.txt")
    unused = declared[name] - used[name]
    if unused:
        problems.append(f"{name}: CMakeLists.txt declares {sorted(unused)}, which none of its files include")
commands = {"probe", "tune", "sweep", "slurm", "sim", "serve", "cli"}
core = os.path.join(root, "src", "core")
for f in sorted(os.listdir(core)):
    for inc in re.findall(r'#include "(\w+)/', open(os.path.join(core, f)).read()):
        if inc in commands:
            problems.append(f"core/{f}: includes from {inc}/, a command's module; the measurement core stands below "
                            f"the commands")
for p in problems:
    print("FAIL:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
