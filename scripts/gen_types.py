#!/usr/bin/env python3
"""gen_types.py - the built-in API type tables (fakeapi/types_table.c).

Two steps, each checkable:

  facts   ../shared/k8s-types/*.json (facts extracted from the upstream
          Kubernetes generated.proto files and Go struct tags)
          -> fakeapi/types/facts.json: the compact subset fakeapi uses.
  table   fakeapi/types/facts.json + resources.txt + go-pointers.txt
          -> fakeapi/types_table.c (static const C data).

Usage:
  scripts/gen_types.py                 both steps (facts only when the
                                       upstream facts directory exists)
  scripts/gen_types.py --check         write nothing; exit 1 if either
                                       committed file differs from what the
                                       generator would write (the test
                                       `fakeapi_types_fresh` runs this)
  scripts/gen_types.py --upstream DIR  read the upstream facts from DIR
                                       (default: ../shared/k8s-types next to
                                       the project root)
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPES = os.path.join(ROOT, "fakeapi", "types")
FACTS = os.path.join(TYPES, "facts.json")
RESOURCES = os.path.join(TYPES, "resources.txt")
POINTERS = os.path.join(TYPES, "go-pointers.txt")
TABLE = os.path.join(ROOT, "fakeapi", "types_table.c")
DEFAULT_UPSTREAM = os.path.join(os.path.dirname(ROOT), "shared", "k8s-types")

SCALARS = {"string": "STRING", "bool": "BOOL", "int32": "INT32", "int64": "INT64",
           "double": "DOUBLE", "bytes": "BYTES"}
# Markers kept in facts.json (field level).
KEEP_MARKERS = ("listType", "listMapKey", "patchStrategy", "patchMergeKey", "mapType",
                "structType", "optional", "required")
META = "k8s.io.apimachinery.pkg.apis.meta.v1."
SPECIAL = {
    META + "Time": "TIME",
    META + "MicroTime": "MICROTIME",
    META + "Duration": "DURATION",
    META + "FieldsV1": "RAW",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "QUANTITY",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "INTORSTRING",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "RAW",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON": "RAW",
}


def fail(msg):
    sys.stderr.write("gen_types: %s\n" % msg)
    sys.exit(2)


# ---------------------------------------------------------------- step 1: facts

def build_facts(upstream):
    index = json.load(open(os.path.join(upstream, "index.json")))
    kinds = json.load(open(os.path.join(upstream, "kinds.json")))
    packages = {}
    for p in index["packages"]:
        name = p["package"] if isinstance(p, dict) else p
        d = json.load(open(os.path.join(upstream, name + ".json")))
        packages[name] = d
    messages = {}
    for pkg in sorted(packages):
        d = packages[pkg]
        for m in d["messages"]:
            full = pkg + "." + m["name"]
            go = m.get("go", {})
            special = SPECIAL.get(full)
            if not special and go.get("kind") == "slice":
                special = "SLICE"
            if not special and go.get("customJSON"):
                special = "CUSTOM"
            msg = {"fields": []}
            if special:
                msg["special"] = special
            mk = m.get("markers", {})
            if mk.get("structType") == "atomic" or mk.get("mapType") == "atomic":
                msg["atomic"] = True
            for f in m["fields"]:
                j = f.get("json") or {}
                jname = j.get("name")
                field = {"proto": f["name"], "number": f["number"], "type": f["type"],
                         "repeated": f["label"] == "repeated"}
                if f["type"] == "map":
                    field["map"] = [f["map"]["key"], f["map"]["value"]]
                if jname is None or jname == "-":
                    field["nojson"] = True
                elif j.get("inline"):
                    field["inline"] = True
                else:
                    field["json"] = jname
                if j.get("omitempty"):
                    field["omitempty"] = True
                marks = {}
                for k in KEEP_MARKERS:
                    v = f["markers"].get(k)
                    if v is None:
                        v = f["markers"].get("k8s:" + k)
                    if v is not None:
                        marks[k] = v
                if marks:
                    field["markers"] = marks
                msg["fields"].append(field)
            msg["fields"].sort(key=lambda x: x["number"])
            messages[full] = msg
    gvs = []
    for gv in kinds["groupVersions"]:
        entry = {"groupVersion": gv["groupVersion"], "package": gv["package"], "kinds": {}}
        for k in gv["kinds"]:
            entry["kinds"][k["kind"]] = [k["message"], k["listMessage"]]
        for o in gv["registeredOther"]:
            entry["kinds"].setdefault(o["kind"], [o["message"], None])
        gvs.append(entry)
    sources = ["%s@%s" % (s["module"], s["commit"]) for s in kinds["sources"]]
    return {"format": "kube-harness-types/1",
            "comment": "Generated by scripts/gen_types.py from the extracted upstream "
                       "type facts; names, numbers, types and markers only.",
            "sources": sources, "groupVersions": gvs, "messages": messages}


def dump_facts(facts):
    # One message per line: reviewable diffs, small file.
    out = ["{"]
    for key in ("format", "comment", "sources", "groupVersions"):
        out.append(" %s: %s," % (json.dumps(key), json.dumps(facts[key], sort_keys=True)))
    out.append(' "messages": {')
    names = sorted(facts["messages"])
    for i, n in enumerate(names):
        sep = "," if i + 1 < len(names) else ""
        out.append("  %s: %s%s" % (json.dumps(n), json.dumps(facts["messages"][n],
                                                             sort_keys=True,
                                                             separators=(",", ":")), sep))
    out.append(" }")
    out.append("}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- step 2: table

def read_resources():
    rows = []
    for ln, line in enumerate(open(RESOURCES), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        cols = line.split()
        if len(cols) != 7:
            fail("%s:%d: want 7 columns, got %d" % (RESOURCES, ln, len(cols)))
        rows.append((ln, cols))
    return rows


def read_pointers():
    ptrs = set()
    if not os.path.exists(POINTERS):
        return ptrs
    for line in open(POINTERS):
        line = line.strip()
        if line and not line.startswith("#"):
            ptrs.add(line)
    return ptrs


def cstr(s):
    if s is None:
        return "NULL"
    return json.dumps(s)  # ASCII names only: JSON escapes are C escapes


def build_table(facts):
    msgs = facts["messages"]
    names = sorted(msgs)
    index = {n: i for i, n in enumerate(names)}
    if len(names) > 32767:
        fail("too many messages for int16_t")
    ptrs = read_pointers()
    for p in sorted(ptrs):
        msg, _, field = p.rpartition(".")
        if msg not in msgs or not any(f["proto"] == field for f in msgs[msg]["fields"]):
            fail("%s: %s names no field" % (POINTERS, p))

    out = []
    w = out.append
    w("/*")
    w(" * types_table.c - GENERATED by scripts/gen_types.py; do not edit.")
    w(" *")
    w(" * From fakeapi/types/facts.json (facts extracted from the upstream API")
    w(" * definitions: %s)," % ", ".join(facts["sources"][:2]))
    for s in facts["sources"][2:]:
        w(" * %s," % s)
    w(" * fakeapi/types/resources.txt and fakeapi/types/go-pointers.txt.")
    w(" * See types.h.")
    w(" */")
    w('#include "types.h"')
    w("")
    w("#define S FAKEAPI__T_STRING")
    w("#define B FAKEAPI__T_BOOL")
    w("#define I32 FAKEAPI__T_INT32")
    w("#define I64 FAKEAPI__T_INT64")
    w("#define DBL FAKEAPI__T_DOUBLE")
    w("#define BY FAKEAPI__T_BYTES")
    w("#define M FAKEAPI__T_MSG")
    w("")
    w("static const fakeapi__tfield F[] = {")
    starts = {}
    nf = 0
    for n in names:
        starts[n] = nf
        for f in msgs[n]["fields"]:
            t = f["type"]
            map_key = "0"
            if t == "map":
                map_key = SCALARS.get(f["map"][0])
                if not map_key:
                    fail("%s.%s: map key %s" % (n, f["proto"], f["map"][0]))
                map_key = {"STRING": "S", "INT32": "I32", "INT64": "I64", "BOOL": "B"}[map_key]
                t = f["map"][1]
            if t in SCALARS:
                tcode = {"STRING": "S", "BOOL": "B", "INT32": "I32", "INT64": "I64",
                         "DOUBLE": "DBL", "BYTES": "BY"}[SCALARS[t]]
                mi = -1
            else:
                if t not in index:
                    fail("%s.%s: unknown type %s" % (n, f["proto"], t))
                tcode = "M"
                mi = index[t]
            flags = []
            if f["repeated"]:
                flags.append("FAKEAPI__F_REPEATED")
            if f.get("map"):
                flags.append("FAKEAPI__F_MAP")
            if f.get("omitempty"):
                flags.append("FAKEAPI__F_OMITEMPTY")
            if f.get("inline"):
                flags.append("FAKEAPI__F_INLINE")
            if f.get("nojson"):
                flags.append("FAKEAPI__F_NOJSON")
            if "%s.%s" % (n, f["proto"]) in ptrs:
                flags.append("FAKEAPI__F_POINTER")
            mk = f.get("markers", {})
            if mk.get("optional") is True:
                flags.append("FAKEAPI__F_OPTIONAL")
            if mk.get("required") is True:
                flags.append("FAKEAPI__F_REQUIRED")
            lt = mk.get("listType")
            if isinstance(lt, list):
                lt = lt[0]
            ps = mk.get("patchStrategy") or ""
            if isinstance(ps, list):
                ps = ps[0]
            patch = []
            for part in ps.split(","):
                if part == "merge":
                    patch.append("FAKEAPI__P_MERGE")
                elif part == "retainKeys":
                    patch.append("FAKEAPI__P_RETAINKEYS")
                elif part == "replace":
                    patch.append("FAKEAPI__P_REPLACE")
                elif part:
                    fail("%s.%s: patchStrategy %s" % (n, f["proto"], part))
            mkey = mk.get("patchMergeKey")
            lkeys = mk.get("listMapKey")
            if isinstance(lkeys, list):
                lkeys = ",".join(lkeys)
            if f.get("map") and mk.get("mapType") == "atomic":
                # +mapType=atomic on a map field: replaced whole (server-side apply).
                list_code = "FAKEAPI__L_ATOMIC"
            elif not f["repeated"] or f.get("map"):
                list_code = "FAKEAPI__L_NONE"
            elif lt in ("atomic", "set", "map"):
                list_code = "FAKEAPI__L_" + lt.upper()
            elif lt:
                fail("%s.%s: listType %s" % (n, f["proto"], lt))
            else:
                list_code = "FAKEAPI__L_NONE"
            w("    {%s, %s, %d, %s, %s, %s, %s, %s, %d, %s, %s}," % (
                cstr(f.get("json", "")), cstr(f["proto"]), f["number"], tcode, map_key,
                list_code, "|".join(patch) or "0", "|".join(flags) or "0", mi,
                cstr(mkey), cstr(lkeys)))
            nf += 1
    w("};")
    w("")
    w("const fakeapi__tmsg fakeapi__tmsgs[] = {")
    for n in names:
        m = msgs[n]
        w("    {%s, %s, F + %d, %d, FAKEAPI__S_%s, %s}," % (
            cstr(n), cstr(n.rsplit(".", 1)[1]), starts[n], len(m["fields"]),
            m.get("special", "NONE"), "true" if m.get("atomic") else "false"))
    w("};")
    w("const size_t fakeapi__ntmsgs = sizeof fakeapi__tmsgs / sizeof fakeapi__tmsgs[0];")
    w("")

    # Resources.
    gvs = {g["groupVersion"]: g for g in facts["groupVersions"]}
    std = "create,delete,deletecollection,get,list,patch,update,watch"
    w("const fakeapi__tres fakeapi__tress[] = {")
    seen = set()
    parents = {}
    storage_of = {}
    rows = read_resources()
    for ln, (gvcol, res, kind, scope, verbs, shorts, cats) in rows:
        star = gvcol.endswith("*")
        gv = gvcol.rstrip("*")
        if (gv, res) in seen:
            fail("%s:%d: %s %s twice" % (RESOURCES, ln, gv, res))
        seen.add((gv, res))
        group, _, version = gv.rpartition("/")
        base = res.split("/")[0]
        if star:
            storage_of[(group, base)] = version
    for ln, (gvcol, res, kind, scope, verbs, shorts, cats) in rows:
        gv = gvcol.rstrip("*")
        group, _, version = gv.rpartition("/")
        kgv = gv
        if ":" in kind:
            kgv, kind = kind.split(":")
        if kgv not in gvs:
            fail("%s:%d: group-version %s not in the facts" % (RESOURCES, ln, kgv))
        pair = gvs[kgv]["kinds"].get(kind)
        if pair is None:
            # Options kinds (PodExecOptions, ...) are registered but carry no ObjectMeta.
            cand = gvs[kgv]["package"] + "." + kind
            pair = [cand, None] if cand in msgs else [None, None]
        msg, lmsg = pair
        sub = "/" in res
        if sub:
            parent = parents.get((gv, res.split("/")[0]))
            if parent is None:
                fail("%s:%d: subresource before its resource" % (RESOURCES, ln))
            namespaced = parent
            lmsg = None
        else:
            if scope not in ("ns", "cluster"):
                fail("%s:%d: scope %s" % (RESOURCES, ln, scope))
            namespaced = scope == "ns"
            parents[(gv, res)] = namespaced
            if msg is None:
                fail("%s:%d: no message for %s %s" % (RESOURCES, ln, kgv, kind))
        st = storage_of.get((group, res.split("/")[0]), version) == version
        w("    {%s, %s, %s, %s, %s, %d, %d, %s, %s, %s, %s, %s}," % (
            cstr(group), cstr(version), cstr(res), cstr(kind), cstr(kgv),
            index[msg] if msg else -1, index[lmsg] if lmsg else -1,
            "true" if namespaced else "false", "true" if st else "false",
            cstr(std if verbs == "std" else verbs), cstr("" if shorts == "-" else shorts),
            cstr("" if cats == "-" else cats)))
    w("};")
    w("const size_t fakeapi__ntress = sizeof fakeapi__tress / sizeof fakeapi__tress[0];")
    w("")
    w("const char fakeapi__types_source[] = %s;" % cstr(", ".join(facts["sources"])))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--upstream", default=DEFAULT_UPSTREAM)
    a = ap.parse_args()
    stale = []
    if os.path.isdir(a.upstream):
        facts_text = dump_facts(build_facts(a.upstream))
        old = open(FACTS).read() if os.path.exists(FACTS) else None
        if old != facts_text:
            stale.append(FACTS)
            if not a.check:
                open(FACTS, "w").write(facts_text)
    elif a.check:
        print("gen_types: no upstream facts at %s: checking the table only" % a.upstream)
    facts = json.loads(open(FACTS).read() if not (stale and a.check) else facts_text)
    table = build_table(facts)
    old = open(TABLE).read() if os.path.exists(TABLE) else None
    if old != table:
        stale.append(TABLE)
        if not a.check:
            open(TABLE, "w").write(table)
    if a.check:
        for s in stale:
            print("gen_types: %s is out of date; run scripts/gen_types.py" %
                  os.path.relpath(s, ROOT))
        return 1 if stale else 0
    for s in stale:
        print("wrote %s" % os.path.relpath(s, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
