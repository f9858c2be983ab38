#!/usr/bin/env python3
"""Check fakeapi's layering from the compiled library (fakeapi/README.md).

Reads `nm -A` of libfakeapi.a: which member defines each global symbol and
which members use it, as a file graph. Fails if the graph has a cycle, or
if anything but server.c calls into the front end (front.c). With -v also
prints the graph.

    scripts/check_layers.py build/fakeapi/libfakeapi.a [-v]
"""
import collections
import subprocess
import sys


def graph(archive):
    out = subprocess.run(["nm", "-A", archive], capture_output=True, text=True, check=True).stdout
    defs, uses = {}, collections.defaultdict(set)
    for line in out.splitlines():
        where, _, rest = line.rpartition(":")
        # "lib.a:member.c.o" or, for a thin archive, "lib.a[dir/member.c.o]"
        member = where.split(":")[-1].rstrip("]").split("/")[-1].split("[")[-1]
        member = member.replace(".c.o", ".c")
        p = rest.split()
        if len(p) == 3 and p[1] in "TDBR":
            defs[p[2]] = member
        elif len(p) == 2 and p[0] == "U":
            uses[member].add(p[1])
    g = collections.defaultdict(set)
    why = {}
    for m, syms in uses.items():
        for s in syms:
            d = defs.get(s)
            if d and d != m:
                g[m].add(d)
                why.setdefault((m, d), s)
    return g, why


def cycles(g):
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
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
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(list(g)):
        if v not in index:
            visit(v)
    return found


def main():
    g, why = graph(sys.argv[1])
    bad = 0
    for comp in cycles(g):
        edges = [f"{a} -> {b} ({why[(a, b)]})" for a in comp for b in sorted(g[a]) if b in comp]
        print("cycle among " + ", ".join(comp) + ":\n  " + "\n  ".join(edges))
        bad += 1
    for m in sorted(g):
        if "front.c" in g[m] and m != "server.c":
            print(f"{m} calls into the front end: {why[(m, 'front.c')]}")
            bad += 1
    if "-v" in sys.argv:
        for m in sorted(g):
            print(m, "->", " ".join(sorted(g[m])))
    print("fakeapi layers: " + ("ok" if not bad else f"{bad} problem(s)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
