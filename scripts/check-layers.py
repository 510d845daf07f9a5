#!/usr/bin/env python3
"""Checks the layer rules of docs/design.md on the source and the built objects.

A module is a .c file with its .h. Module A depends on module B when A's files include B's
header, or A's object calls or reads a symbol that B's object defines (nm). The check fails when
  - a module depends on a layer its own layer may not use (the include rule; the link of each
    layer library enforces the call rule, and this check repeats it with a clearer message), or
  - modules depend on each other in a cycle (strongly connected components of the graph).

Usage: scripts/check-layers.py SOURCE_DIR BUILD_DIR   (exit 0: clean, 1: violations, 2: usage)
"""
import os
import re
import subprocess
import sys

# Layer of a module from its folder, and the layers each may use (itself included).
LAYERS = {
    "common": {"common"},
    "probes": {"probes", "common"},
    "client/model": {"client/model", "probes", "common"},
    "client/analysis": {"client/analysis", "client/model", "probes", "common"},
    "client/report": {"client/report", "client/analysis", "client/model", "probes", "common"},
    "client/run": {"client/run", "client/analysis", "client/model", "probes", "common"},
    "client/lab": {"client/lab", "client/model", "common"},
    "client": {"client", "client/run", "client/report", "client/lab", "client/analysis",
               "client/model", "probes", "common"},
    "server": {"server", "common"},
}
TOP = ("common", "probes", "client", "server")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(module):
    folder = os.path.dirname(module)
    return folder if folder in LAYERS else None


def modules(src):
    found = {}
    for top in TOP:
        for root, _, files in os.walk(os.path.join(src, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    rel = os.path.relpath(os.path.join(root, f), src)
                    found.setdefault(rel[:-2], []).append(rel)
    return found


def include_edges(src, mods):
    edges = {m: set() for m in mods}
    for m, files in mods.items():
        for rel in files:
            with open(os.path.join(src, rel), encoding="utf-8") as fh:
                for inc in INCLUDE.findall(fh.read()):
                    dep = inc[:-2]
                    if inc.endswith(".h") and dep in mods and dep != m:
                        edges[m].add(dep)
    return edges


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True,
                         check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, undefined


def objects(build, mods):
    """Module -> object file, from CMake's TARGET.dir/<path>.c.o layout (first one wins)."""
    found = {}
    for root, _, files in os.walk(os.path.join(build, "CMakeFiles")):
        for f in files:
            if not f.endswith(".c.o"):
                continue
            path = os.path.join(root, f)
            rel = path.split(".dir" + os.sep, 1)[-1][:-4]
            if rel in mods and rel not in found:
                found[rel] = path
    return found


def call_edges(objs):
    defs, undefs = {}, {}
    for m, obj in objs.items():
        defs[m], undefs[m] = symbols(obj)
    owner = {}
    for m, names in defs.items():
        for n in names:
            owner.setdefault(n, m)
    edges = {m: set() for m in objs}
    for m, names in undefs.items():
        for n in names:
            dep = owner.get(n)
            if dep and dep != m:
                edges[m].add(dep)
    return edges


def cycles(edges):
    """Tarjan's strongly connected components with more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, build = sys.argv[1], sys.argv[2]
    mods = modules(src)
    objs = objects(build, mods)
    if not objs:
        print(f"check-layers: no object files under {build}/CMakeFiles (build first)",
              file=sys.stderr)
        return 2
    inc = include_edges(src, mods)
    calls = call_edges(objs)
    bad = []
    for kind, edges in (("includes", inc), ("calls", calls)):
        for m in sorted(edges):
            lm = layer_of(m)
            for d in sorted(edges[m]):
                ld = layer_of(d)
                if lm is None or ld is None:
                    bad.append(f"{m} {kind} {d}: a module outside the known layers")
                elif ld not in LAYERS[lm]:
                    bad.append(f"{m} ({lm}) {kind} {d} ({ld}): layer {lm} may not use {ld}")
    both = {m: inc.get(m, set()) | calls.get(m, set()) for m in set(inc) | set(calls)}
    for comp in cycles(both):
        bad.append("cycle: " + " -> ".join(comp))
    for line in bad:
        print("check-layers: " + line)
    print(f"check-layers: {len(mods)} modules, {len(objs)} objects, {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
