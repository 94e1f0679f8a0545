#!/usr/bin/env python3
"""The layers of `runtime/src`: every import runs down or sideways, never up.

Each file of `runtime/src` belongs to a layer (the table below: the longest
matching folder or file wins). A file may import from its own layer and the
layers below it; an import from a lower layer to a higher one is a violation,
and so is an import cycle between top-level modules (folders or files directly
under `runtime/src`), whatever their layers.

An import is a `use crate::...` tree or a `crate::a::b` path anywhere in the
code (and `super::`/`self::` paths, resolved). A method that a file adds to a
type of a lower layer (an inherent `impl` of that type in a higher file) counts
as an import of that file wherever it is called (`.name(` or `::name(`): a call
through such an impl is a dependency the paths alone do not show. Test modules are left out:
files named `tests.rs`, and `#[cfg(test)] mod NAME { .. }` blocks.

`.ci/layers.allow` lists edges that are violations but known, one a line:
`FROM -> TO  # reason`, where FROM and TO are paths under `runtime/src` (a
folder or a file; a folder covers everything in it). An allowed edge is
counted but does not fail the check, and is left out of the cycle search.
An allow line that no longer matches anything is reported, so the list only
shrinks.

Exit status: 0 when clean, 1 on any violation or stale allow line.
Usage: python3 .ci/layers.py [-v]   (-v lists every edge)
"""

import os
import re
import sys

# Layer ranks: lower layers are imported by higher ones, never the reverse.
# Keys are paths under runtime/src (a folder ends in '/').
LAYERS = {
    # 0 ground: names and paths, messages, failures, errors, the event
    #   stream, and the codec's vocabulary that messages need.
    "ground/": 0,
    # 1 mailbox: lanes, locks, bounds, offer, answers; a seam for a lane
    #   that is not local (Outbox) and for the actor types it carries.
    "mailbox/": 1,
    # 2 actor: refs, the cell, the context, spawn, promises, adapters,
    #   behaviors, replies, signals, supervision, and what the context owns
    #   (timers, the stash, blocking tasks); the system's shared state.
    "actor/": 2,
    # 3 features: built on the actor and the mailbox (ask, state, router).
    "features/": 3,
    # 4 network: links, associations, frames, registry, refs on the wire, the
    #   lane of a remote ref (the mailbox's Outbox), remote spawn.
    "net/": 4,
    # 5 system: the composition root (builder, termination, scope, shutdown);
    #   it builds the transport, so it sits above net/.
    "system/": 5,
    # 6 testkit: probes, kits, test doubles.
    "testkit/": 6,
    # 7 the crate root: re-exports everything.
    "lib.rs": 7,
}

NAMES = {
    0: "ground",
    1: "mailbox",
    2: "actor",
    3: "features",
    4: "network",
    5: "system",
    6: "testkit",
    7: "root",
}

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.normpath(os.path.join(ROOT, "runtime", "src"))
ALLOW = os.path.normpath(os.path.join(ROOT, ".ci", "layers.allow"))


def rank_of(rel):
    best = None
    for key, rank in LAYERS.items():
        if rel == key or (key.endswith("/") and rel.startswith(key)):
            if best is None or len(key) > len(best[0]):
                best = (key, rank)
    return None if best is None else best[1]


def module_path(rel):
    """`actor/cell/mod.rs` -> ['actor', 'cell']; `lib.rs` -> []."""
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def strip_comments(text):
    # Line comments (doc comments included); block comments. Strings are
    # kept: a path inside a string is rare and harmless to over-count.
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def strip_test_modules(text):
    out = []
    pos = 0
    pat = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*([{;])")
    while True:
        m = pat.search(text, pos)
        if not m:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos : m.start()])
        if m.group(1) == ";":
            pos = m.end()
            continue
        depth = 1
        i = m.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        pos = i


def split_top(s):
    """Split a use-tree list at commas not inside braces."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand_tree(prefix, tree):
    """`a::{b, c::{d, e}}` -> [prefix+a::b, prefix+a::c::d, ...]."""
    tree = tree.strip()
    m = re.match(r"^((?:[\w]+\s*::\s*)*)\{(.*)\}$", tree, flags=re.S)
    if m:
        head = [x.strip() for x in m.group(1).split("::") if x.strip()]
        result = []
        for sub in split_top(m.group(2)):
            result.extend(expand_tree(prefix + head, sub))
        return result
    tree = re.sub(r"\s+as\s+\w+$", "", tree)
    segs = [x.strip() for x in tree.split("::") if x.strip()]
    segs = [s for s in segs if s != "*"]
    if segs and segs[-1] == "self":
        segs = segs[:-1]
    return [prefix + segs]


def expand_tree_named(prefix, tree):
    """As `expand_tree`, with the name each leaf is bound to: [(name, segs)]."""
    tree = tree.strip()
    m = re.match(r"^((?:[\w]+\s*::\s*)*)\{(.*)\}$", tree, flags=re.S)
    if m:
        head = [x.strip() for x in m.group(1).split("::") if x.strip()]
        result = []
        for sub in split_top(m.group(2)):
            result.extend(expand_tree_named(prefix + head, sub))
        return result
    alias = re.search(r"\s+as\s+(\w+)$", tree)
    tree = re.sub(r"\s+as\s+\w+$", "", tree)
    segs = [x.strip() for x in tree.split("::") if x.strip()]
    if not segs or segs[-1] == "*":
        return []
    name = alias.group(1) if alias else segs[-1]
    return [(name, prefix + segs)]


def resolve(base_mod, segs):
    """Resolve a path's leading `crate`/`super`/`self` to an absolute one."""
    if not segs:
        return None
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] in ("super", "self"):
        cur = list(base_mod)
        i = 0
        while i < len(segs) and segs[i] in ("super", "self"):
            if segs[i] == "super":
                if not cur:
                    return None
                cur.pop()
            i += 1
        return cur + segs[i:]
    return None


def collect_paths(rel, text):
    base = module_path(rel)
    paths = []
    # use trees
    for m in re.finditer(r"\buse\s+((?:crate|super|self)\b[^;]*);", text, flags=re.S):
        tree = m.group(1)
        head, _, rest = tree.partition("::")
        for p in expand_tree([head.strip()], rest):
            r = resolve(base, p)
            if r:
                paths.append(r)
    text = re.sub(r"\buse\s+(?:crate|super|self)\b[^;]*;", "", text, flags=re.S)
    # inline paths
    for m in re.finditer(r"(?<![\w$:])((?:crate|super)(?:\s*::\s*(?:super|\w+))+)", text):
        segs = [x.strip() for x in m.group(1).split("::")]
        r = resolve(base, segs)
        if r:
            paths.append(r)
    return paths


def main():
    verbose = "-v" in sys.argv[1:]
    files = {}
    for dirpath, _, names in os.walk(SRC):
        for name in names:
            if not name.endswith(".rs") or name == "tests.rs":
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, SRC).replace(os.sep, "/")
            files[rel] = full
    # module path -> file
    by_mod = {}
    for rel in files:
        by_mod[tuple(module_path(rel))] = rel
    problems = []
    for rel in sorted(files):
        if rank_of(rel) is None:
            problems.append(f"{rel}: no layer in the table of .ci/layers.py")

    # Names the crate root re-exports (`crate::ActorRef`): resolved to where they
    # come from, so a path through the root is judged by its real target.
    root_names = {}
    with open(os.path.join(SRC, "lib.rs"), encoding="utf-8") as f:
        root_text = strip_test_modules(strip_comments(f.read()))
    for m in re.finditer(r"\bpub\s+use\s+(crate\b[^;]*);", root_text, flags=re.S):
        head, _, rest = m.group(1).partition("::")
        for p in expand_tree_named([head.strip()], rest):
            name, segs = p
            if len(segs) > 1:
                root_names.setdefault(name, segs[1:])

    def through_root(path):
        seen = 0
        while path and seen < 4:
            seen += 1
            if path[0] in ("prelude", "__private") and len(path) > 1:
                path = path[1:]
                continue
            if path[0] in root_names and tuple(path[:1]) not in by_mod:
                path = root_names[path[0]] + path[1:]
                continue
            break
        return path

    edges = {}  # (from, to) -> first example path
    for rel, full in sorted(files.items()):
        with open(full, encoding="utf-8") as f:
            text = strip_test_modules(strip_comments(f.read()))
        for path in collect_paths(rel, text):
            path = through_root(path)
            # longest module prefix that is a file
            target = None
            for n in range(len(path), 0, -1):
                if tuple(path[:n]) in by_mod:
                    target = by_mod[tuple(path[:n])]
                    break
            if target is None or target == rel:
                continue
            edges.setdefault((rel, target), "::".join(["crate"] + path))

    texts = {}
    for rel, full in files.items():
        with open(full, encoding="utf-8") as f:
            texts[rel] = strip_test_modules(strip_comments(f.read()))
    for (a, b), example in extension_calls(texts).items():
        edges.setdefault((a, b), example)

    allow = []
    if os.path.exists(ALLOW):
        with open(ALLOW, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                body, _, reason = line.partition("#")
                body = body.strip()
                if not body:
                    continue
                m = re.match(r"^(\S+)\s*->\s*(\S+)$", body)
                if not m or not reason.strip():
                    problems.append(f".ci/layers.allow:{lineno}: expected `FROM -> TO  # reason`")
                    continue
                allow.append([m.group(1), m.group(2), lineno, 0])

    def covers(key, rel):
        return rel == key or (key.endswith("/") and rel.startswith(key))

    def allowed(a, b):
        hit = False
        for entry in allow:
            if covers(entry[0], a) and covers(entry[1], b):
                entry[3] += 1
                hit = True
        return hit

    upward = []
    allowed_count = 0
    live = []
    for (a, b), example in sorted(edges.items()):
        ra, rb = rank_of(a), rank_of(b)
        # Only an edge that can be a violation (upward, or sideways between two
        # top-level modules, where a cycle can form) uses an allow line; one that
        # runs down no longer needs its line, which is then reported as stale.
        can_violate = ra is None or rb is None or ra < rb or (
            ra == rb and a.split("/")[0] != b.split("/")[0]
        )
        ok = can_violate and allowed(a, b)
        if verbose:
            print(f"  {a} ({ra}) -> {b} ({rb})  {example}")
        if ra is not None and rb is not None and ra < rb:
            upward.append((a, b, example, ok))
            if ok:
                allowed_count += 1
        if not ok:
            live.append((a, b))

    for a, b, example, ok in upward:
        if not ok:
            problems.append(
                f"upward: {a} ({NAMES[rank_of(a)]}) -> {b} ({NAMES[rank_of(b)]}) via {example}"
            )

    # cycles between top-level modules, over edges not allowed
    def top(rel):
        return rel.split("/")[0]

    graph = {}
    for a, b in live:
        ta, tb = top(a), top(b)
        if ta != tb and ta != "lib.rs":
            graph.setdefault(ta, set()).add(tb)
            graph.setdefault(tb, set())
    for comp in sccs(graph):
        if len(comp) > 1:
            comp = sorted(comp)
            witnesses = sorted(
                f"{a} -> {b}" for a, b in live if top(a) in comp and top(b) in comp and top(a) != top(b)
            )
            problems.append(
                "cycle between " + ", ".join(comp) + ":\n      " + "\n      ".join(witnesses)
            )

    for src, dst, lineno, hits in allow:
        if hits == 0:
            problems.append(f".ci/layers.allow:{lineno}: `{src} -> {dst}` matches no edge that needs it: remove it")

    for p in problems:
        print("layers: " + p)
    print(
        f"layers: {len(files)} files, {len(edges)} edges, {len(upward)} upward (allowed {allowed_count})"
    )
    return 1 if problems else 0


def extension_calls(texts):
    """Calls of methods that a file adds to a type defined in a lower layer.

    Returns {(caller, impl file): example}. Only methods whose name no other
    file defines are followed, so a common name (`stop`, `len`) cannot fake a
    dependency.
    """
    defined = {}
    for rel, text in texts.items():
        for m in re.finditer(r"\b(?:struct|enum|trait|type)\s+(\w+)", text):
            defined.setdefault(m.group(1), set()).add(rel)
    fn_count = {}
    for text in texts.values():
        for m in re.finditer(r"\bfn\s+(\w+)", text):
            fn_count[m.group(1)] = fn_count.get(m.group(1), 0) + 1
    added = {}  # method name -> (impl file, type)
    for rel, text in texts.items():
        rank = rank_of(rel)
        for m in re.finditer(r"^impl(?:<[^{]*?>)?\s+(\w+)(?:<[^{]*>)?\s*\{", text, flags=re.M):
            ty = m.group(1)
            homes = defined.get(ty, set())
            if not homes or rel in homes:
                continue
            if not any(rank_of(h) is not None and rank is not None and rank_of(h) < rank for h in homes):
                continue
            depth, i = 1, m.end()
            while depth and i < len(text):
                depth += (text[i] == "{") - (text[i] == "}")
                i += 1
            for f in re.finditer(r"\bfn\s+(\w+)", text[m.end() : i]):
                if fn_count.get(f.group(1)) == 1:
                    added[f.group(1)] = (rel, ty)
    edges = {}
    for rel, text in texts.items():
        for name, (home, ty) in added.items():
            if home != rel and re.search(r"(?:\.|::)" + name + r"\s*\(", text):
                edges.setdefault((rel, home), f"{ty}::{name} (added in {home})")
    return edges


def sccs(graph):
    """Tarjan's strongly connected components."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
