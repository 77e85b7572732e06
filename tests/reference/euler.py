"""Slow, obvious reference for ``euler``: which graphs have an Euler circuit or path (degrees
counted in a loop, connectivity by a union-find over the edges), and whether a tour is one
(each edge row used once, each step on its own edge's endpoints, consecutive, closed for a
circuit). Plain Python lists; no graphops code."""
from __future__ import annotations


def _components(n: int, src: list[int], dst: list[int]) -> list[int]:
    parent = list(range(n))

    def root(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for u, v in zip(src, dst):
        parent[root(u)] = root(v)
    return [root(v) for v in range(n)]


def has_euler(n: int, src: list[int], dst: list[int], directed: bool, kind: str) -> bool:
    """Whether vertices ``0..n-1`` with these edges have an Euler ``circuit`` or ``path`` (a
    circuit counts as a path): every edge in one component, and the degree conditions."""
    if not src:
        return True
    comp = _components(n, src, dst)
    if len({comp[u] for u in src} | {comp[v] for v in dst}) > 1:
        return False
    if directed:
        out_deg, in_deg = [0] * n, [0] * n
        for u, v in zip(src, dst):
            out_deg[u] += 1
            in_deg[v] += 1
        diff = [o - i for o, i in zip(out_deg, in_deg)]
        if all(d == 0 for d in diff):
            return True
        return kind == "path" and sorted(d for d in diff if d) == [-1, 1]
    deg = [0] * n
    for u, v in zip(src, dst):
        deg[u] += 1
        deg[v] += 1  # a self-loop adds 2
    odd = sum(d % 2 for d in deg)
    return odd == 0 or (kind == "path" and odd == 2)


def tour_problem(src: list[int], dst: list[int], directed: bool, tour: list[tuple[int, int, int]],
                 kind: str, source: int | None = None) -> str | None:
    """Why ``tour`` (``(from, to, edge row)`` per step) is not an Euler ``kind`` of the edges; ``None``
    when it is."""
    if sorted(e for _, _, e in tour) != list(range(len(src))):
        return "the steps do not use every edge row exactly once"
    for i, (a, b, e) in enumerate(tour):
        if (a, b) != (src[e], dst[e]) and (directed or (a, b) != (dst[e], src[e])):
            return f"step {i} is not on edge {e}'s endpoints"
        if i and tour[i - 1][1] != a:
            return f"step {i} does not start where step {i - 1} ended"
    if tour and kind == "circuit" and tour[-1][1] != tour[0][0]:
        return "the circuit does not close"
    if tour and source is not None and tour[0][0] != source:
        return "the tour does not start at the source"
    return None
