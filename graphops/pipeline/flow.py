"""Steps as a dataflow: a step reads the results of the steps its input graphs are made from
(``from_step``, also through graphs generated from such a graph), so a run takes the steps in
dependency order, the file's order where nothing depends; steps that feed each other in a cycle
are refused by validation, spelling the cycle out."""
from __future__ import annotations

from typing import Any

__all__ = ["reads", "order", "cycle", "cycle_problem", "blocked"]


def reads(loaded: Any) -> dict[str, list[tuple[str, str]]]:
    """Step id -> ``(graph, step)`` for each input graph made from another step's result."""
    out: dict[str, list[tuple[str, str]]] = {}
    for step in loaded.model.steps:
        found = out.setdefault(step.id, [])
        for graph in step.inputs.values():
            if graph in loaded.model.graphs:
                found += [(graph, s) for s in loaded.sources.steps_of(graph) if (graph, s) not in found]
    return out


def order(loaded: Any) -> list[int]:
    """The steps' positions in the order a run takes them: a step after the steps it reads, else in
    file order (steps in a cycle, refused by validation, last in file order)."""
    steps = loaded.model.steps
    needs = reads(loaded)
    ids = {s.id for s in steps}
    done: set[str] = set()
    left = list(range(len(steps)))
    taken: list[int] = []
    while left:
        ready = next((i for i in left if all(s in done or s not in ids for _, s in needs[steps[i].id])), None)
        if ready is None:  # a cycle: what is left, in file order
            return taken + left
        taken.append(ready)
        left.remove(ready)
        done.add(steps[ready].id)
    return taken


def cycle(loaded: Any) -> list[tuple[str, str, str]] | None:
    """A cycle of steps feeding each other, as ``(step, graph, step it reads)`` links from the step of
    the cycle first in file order back to it; ``None`` when there is none, or when step ids repeat
    (that is the file's error then, and a cycle through a repeated id would be a guess). Iterative:
    chains of any length."""
    steps = [s.id for s in loaded.model.steps]
    if len(set(steps)) != len(steps):
        return None
    needs = reads(loaded)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in steps:
        if state.get(root):
            continue
        path: list[tuple[str, str, str]] = []
        stack = [(root, iter(needs.get(root, ())))]
        state[root] = 1
        while stack:
            at, todo = stack[-1]
            link = next(todo, None)
            if link is None:
                state[at] = 2
                stack.pop()
                if path:
                    path.pop()
                continue
            graph, then = link
            if then not in needs:  # a step the file does not have (reported at the graph)
                continue
            if state.get(then) == 1:  # back on the path: the cycle is the path from `then` on
                loop = path[[p[0] for p in path].index(then):] if then != at else []
                loop = loop + [(at, graph, then)]
                first = min(range(len(loop)), key=lambda k: steps.index(loop[k][0]))
                return loop[first:] + loop[:first]
            if not state.get(then):
                state[then] = 1
                path.append((at, graph, then))
                stack.append((then, iter(needs.get(then, ()))))
    return None


def cycle_problem(links: list[tuple[str, str, str]]) -> str:
    """The message of a cycle of steps (:func:`cycle`)."""
    if len(links) == 1:
        step, graph, _ = links[0]
        return (f"step {step!r} reads graph {graph!r}, which is made from the step's own result, so it can never "
                f"run; make {graph!r} from another step or from a file")
    said = [f"{step!r} reads graph {graph!r} (made from step {then!r})" for step, graph, then in links]
    if len(said) > 8:  # a long cycle: its ends, and how long it is
        said = [*said[:4], f"... {len(said) - 6} more ...", *said[-2:]]
    spelled = ", ".join(said) + (f" ({len(links)} steps in all)" if len(links) > 8 else "")
    return (f"steps feed each other in a cycle: {spelled}; none of them can run first. Make one of those graphs "
            f"from a file, a generator or a step outside the cycle")


def blocked(needs: list[tuple[str, str]], status: dict[str, str]) -> str | None:
    """Why a step cannot run because a step it reads did not finish (its ``status``), or ``None``."""
    for graph, step in needs:
        if status.get(step, "ok") not in ("ok", "cached"):
            how = {"failed": "failed", "not run": "was not run", "interrupted": "was interrupted"}.get(status[step],
                                                                                                       status[step])
            return f"not run: its input graph {graph!r} is made from step {step!r}, which {how}"
    return None
