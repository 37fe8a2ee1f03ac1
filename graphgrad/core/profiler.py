"""``gg.profile()``: where the time of a program goes, op by op.

    with gg.profile() as prof:
        for _ in range(5):
            train_step()
    print(prof.table(sort_by="self", top=20))
    prof.export_chrome_trace("trace.json")     # open in https://ui.perfetto.dev or chrome://tracing

Recorded, in the thread that entered the ``with`` block:

* every eager op (category ``forward``, or ``backward`` when run by a gradient rule): the time of its
  forward computation, the shapes of its inputs, the bytes of its output (0 when the output is a view
  of an input) and the user's line that called it (the innermost frame outside the graphgrad library);
* the backward walk (``backward``, one event per call of ``backward()``/``grad()``) and each node's
  gradient rule in it (``<Op>.backward``, placed at the line of the forward op that made the node);
* ``Session.run`` (category ``session``) and each step of its plan (the node's op, its creation site);
* ``gg.function`` calls and traces (category ``function``), which contain the Session run of the plan;
* regions of the user's own, ``with gg.record_function("name"):`` (category ``user``).

Each event has a *total* time and a *self* time: the total minus the totals of the events recorded
inside it (the ops of a gradient rule, the steps of a run). Times are read from a clock that leaves
out the profiler's own bookkeeping, so nested totals add up exactly: the self times of all events
sum to the totals of the outermost ones, and what the block spent outside any op (Python, framework
code between ops) is the wall time minus that sum (``Profile.untracked``).

When no profile is open, eager mode pays one flag check per op (``PROFILER.active`` in
``Op.apply``), the backward walk and ``Session.run`` one per call.
"""
from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time
from typing import Any, Callable, Optional

from graphgrad.backend import np

_clock = time.perf_counter_ns
_thread = threading.get_ident
_ndarray = np.ndarray
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# graphgrad.bench holds example workloads, not library code: a profile of one points at its lines
_BENCH_DIR = os.path.join(_PACKAGE_DIR, "bench") + os.sep
_LIBRARY_FILE: dict = {}  # filename -> whether it belongs to the graphgrad library (a cache)

#: One recorded event. ``start``/``dur``/``self_time`` in nanoseconds on the profile's clock (start
#: counted from the beginning of the profile); ``depth`` 0 for outermost events; ``site`` "file:line"
#: or ""; ``shapes`` the input shapes (``None`` for a non-array input) or ``()``.
Event = collections.namedtuple("Event", "name cat start dur self_time depth nbytes site shapes")


class _Switch:
    """The flag that instrumented code checks, and the profile that records while it is set."""

    def __init__(self) -> None:
        self.active = False
        self.profile: Optional["Profile"] = None


PROFILER = _Switch()


def _in_library(filename: str) -> bool:
    flag = _LIBRARY_FILE.get(filename)
    if flag is None:
        if filename.startswith("<graphgrad"):  # generated code (compiled plans)
            flag = True
        else:
            path = os.path.abspath(filename)
            flag = path.startswith(_PACKAGE_DIR) and not path.startswith(_BENCH_DIR)
        _LIBRARY_FILE[filename] = flag
    return flag


def user_site() -> Optional[tuple]:
    """(filename, line) of the innermost frame outside the graphgrad library, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _in_library(filename):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


def _root(array):
    base = getattr(array, "base", None)
    return array if base is None else base


def _new_bytes(out, arrays) -> int:
    """Bytes of the array(s) ``out``, except those that are (views of) one of ``arrays``."""
    if out is None:
        return 0
    if isinstance(out, (tuple, list)):
        return sum(_new_bytes(o, arrays) for o in out)
    nbytes = getattr(out, "nbytes", 0)
    if nbytes:
        root = _root(out)
        for a in arrays:
            if isinstance(a, (tuple, list)):  # e.g. taking one output of a kernel's tuple
                if any(x is out or _root(x) is root for x in a):
                    return 0
            elif a is out or (getattr(a, "nbytes", 0) and _root(a) is root):
                return 0
    return int(nbytes)


def _shapes(arrays) -> tuple:
    return tuple(getattr(a, "shape", None) for a in arrays)


class Profile:
    """Records events while open (``with gg.profile() as prof:``); see the module docstring.

    Attributes:
        wall: nanoseconds from entering to leaving the block (on the profile's clock).
    """

    def __init__(self, record_shapes: bool = True) -> None:
        self.record_shapes = record_shapes
        self._events: list = []   # plain tuples (the garbage collector stops tracking them), as Event
        self.wall = 0
        self.thread: Optional[int] = None
        self._open: list = []     # per open event: the summed totals of the events recorded inside it
        self._lost = 0            # ns of bookkeeping so far, taken out of every time
        self._origin = 0
        self._phase = "forward"   # category of eager ops: "forward", or "backward" inside a backward walk
        self._sites: dict = {}    # id(an eager node's inputs tuple) -> site of its forward op
        self._previous: tuple = ()
        self._native_thread = 0

    # ---- entering and leaving ----------------------------------------------------------------------
    def __enter__(self) -> "Profile":
        self._previous = (PROFILER.active, PROFILER.profile)
        self.thread = _thread()
        self._native_thread = threading.get_native_id()  # the id the OS (and a trace viewer) shows
        self._origin = _clock()
        PROFILER.profile = self
        PROFILER.active = True
        return self

    def __exit__(self, *exc) -> bool:
        PROFILER.active, PROFILER.profile = self._previous
        self.wall = _clock() - self._lost - self._origin
        self._sites.clear()
        return False

    # ---- recording ------------------------------------------------------------------------------
    # An event: bookkeeping begins at ``entered`` (raw clock); the work runs from ``start`` to ``end``
    # (raw clock, read as close to it as possible); the bookkeeping before ``start`` is added to
    # ``_lost`` right after it (so events nested inside see it), the bookkeeping after ``end`` by
    # :meth:`_end`. ``begin`` is the event's start on the profile clock (raw time minus ``_lost``).
    def _end(self, begin: int, end: int, name: str, cat: str, nbytes: int, site: Any, shapes: tuple) -> None:
        """Close the innermost open event, begun at ``begin`` (profile clock), ended at ``end`` (raw)."""
        dur = end - self._lost - begin
        inner = self._open.pop()
        if self._open:
            self._open[-1] += dur
        self._events.append((name, cat, begin - self._origin, dur, dur - inner, len(self._open), nbytes, site, shapes))
        self._lost += _clock() - end

    def forward(self, op, xp, arrays: list, inputs: tuple):
        """``op.forward(xp, *arrays)`` of an eager op, recorded (called by ``Op.apply``)."""
        entered = _clock()
        if _thread() != self.thread:
            return op.forward(xp, *arrays)
        site = user_site()
        self._sites[id(inputs)] = site
        self._open.append(0)
        lost, out, forward = self._lost, None, op.forward
        start = _clock()
        self._lost = lost + start - entered
        try:
            out = forward(xp, *arrays)
        finally:
            end = _clock()
            self._end(entered - lost, end, op.name, self._phase, _new_bytes(out, arrays), site,
                      _shapes(arrays) if self.record_shapes else ())
        return out

    def backward(self, node, inputs: tuple, out, g):
        """``node.op.backward(inputs, out, g)`` in the backward walk, recorded."""
        entered = _clock()
        if _thread() != self.thread:
            return node.op.backward(inputs, out, g)
        self._open.append(0)
        lost, backward = self._lost, node.op.backward
        start = _clock()
        self._lost = lost + start - entered
        try:
            return backward(inputs, out, g)
        finally:
            end = _clock()
            shapes = _shapes([x._data if hasattr(x, "_data") else x for x in inputs]) if self.record_shapes else ()
            self._end(entered - lost, end, node.op.name + ".backward", "backward", 0, self._sites.get(id(inputs)),
                      shapes)

    def span(self, name: str, cat: str, phase: Optional[str] = None, site: Any = None) -> "_Span":
        """A context recording its body as one event; ``phase`` sets the category of eager ops inside."""
        return _Span(self, name, cat, phase, site)

    def call(self, name: str, cat: str, fn: Callable, *args):
        """``fn(*args)``, recorded as one event."""
        with self.span(name, cat):
            return fn(*args)

    def plan_runner(self, plan) -> Callable:
        """A runner for ``plan`` (a Session's execution plan) that records the run and each step; it
        does what the plan's own runner does, one step at a time."""
        steps = plan.steps
        compiled = plan.runner

        def run(values: list, xp, state: list) -> None:
            if _thread() != self.thread:
                return compiled(values, xp, state)
            with self.span("Session.run", "session"):
                for index, (slot, forward, args, node, frees) in enumerate(steps):
                    state[0] = index
                    values[slot] = self._step(forward, xp, [values[i] for i in args], node)
                    for dead in frees:
                        values[dead] = None
            return None

        return run

    def _step(self, forward, xp, arrays: list, node):
        entered = _clock()
        self._open.append(0)
        lost, out = self._lost, None
        start = _clock()
        self._lost = lost + start - entered
        try:
            out = forward(xp, *arrays)
            if out is not None and out.__class__ is not _ndarray and not getattr(node.op, "multiple_outputs", False):
                out = xp.asarray(out)
        finally:
            end = _clock()
            variable = getattr(node.op, "variable", None)  # a read returns the variable's own array
            nbytes = 0 if variable is not None and out is variable._data else _new_bytes(out, arrays)
            self._end(entered - lost, end, node.op.name, "session", nbytes, node.site,
                      _shapes(arrays) if self.record_shapes else ())
        return out

    # ---- results ----------------------------------------------------------------------------------
    @property
    def events(self) -> list:
        """The recorded events (:data:`Event`), in the order they finished."""
        return [Event._make(e) for e in self._events]

    @property
    def recorded(self) -> int:
        """Nanoseconds inside recorded events (the sum of the outermost events' totals)."""
        return sum(e[3] for e in self._events if e[5] == 0)

    @property
    def untracked(self) -> int:
        """Nanoseconds of the block outside any recorded event (Python and framework code between ops)."""
        return max(self.wall - self.recorded, 0)

    def key_averages(self, group_by: str = "op") -> list:
        """The events summed per (name, category) — or per (name, category, site) with
        ``group_by="site"`` — as dicts: name, cat, calls, self_time, total (ns), nbytes, site (the site
        with the most self time in the group), shapes (of that group's first event)."""
        rows: dict = {}
        site_time: dict = {}
        for e in self.events:
            site = _site_text(e.site)
            key = (e.name, e.cat) if group_by == "op" else (e.name, e.cat, site)
            row = rows.get(key)
            if row is None:
                row = rows[key] = {"name": e.name, "cat": e.cat, "calls": 0, "self_time": 0, "total": 0,
                                   "nbytes": 0, "site": site, "shapes": e.shapes}
                site_time[key] = {}
            row["calls"] += 1
            row["self_time"] += e.self_time
            row["total"] += e.dur
            row["nbytes"] += e.nbytes
            per_site = site_time[key]
            per_site[site] = per_site.get(site, 0) + e.self_time
        for key, row in rows.items():
            row["site"] = max(site_time[key].items(), key=lambda kv: kv[1])[0]
        return list(rows.values())

    def table(self, sort_by: str = "self", top: Optional[int] = 20, group_by: str = "op") -> "Table":
        """The :meth:`key_averages` as a text table (returned; ``print`` it), sorted by ``"self"``,
        ``"total"``, ``"calls"``, ``"bytes"`` or ``"name"``, the ``top`` rows (all with ``None``)."""
        keys = {"self": lambda r: -r["self_time"], "total": lambda r: -r["total"], "calls": lambda r: -r["calls"],
                "bytes": lambda r: -r["nbytes"], "name": lambda r: (r["name"], r["cat"])}
        if sort_by not in keys:
            raise ValueError(f"sort_by must be one of {sorted(keys)}, got {sort_by!r}")
        rows = sorted(self.key_averages(group_by), key=keys[sort_by])
        shown = rows if top is None else rows[:top]
        recorded = max(self.recorded, 1)
        header = (f"{'name':<28} {'phase':<9}{'calls':>7}{'self ms':>10}{'self %':>8}{'total ms':>10}"
                  f"{'avg us':>9}{'alloc MB':>10}  site")
        lines = [header, "-" * len(header)]
        for r in shown:
            lines.append(f"{r['name'][:28]:<28} {r['cat']:<9}{r['calls']:>7}{r['self_time'] / 1e6:>10.3f}"
                         f"{100 * r['self_time'] / recorded:>7.1f}%{r['total'] / 1e6:>10.3f}"
                         f"{r['total'] / r['calls'] / 1e3:>9.1f}{r['nbytes'] / 1e6:>10.2f}  {_short(r['site'])}")
        if len(rows) > len(shown):
            rest = rows[len(shown):]
            lines.append(f"{f'({len(rest)} more rows)':<38}{sum(r['calls'] for r in rest):>7}"
                         f"{sum(r['self_time'] for r in rest) / 1e6:>10.3f}")
        lines.append("-" * len(header))
        lines.append(f"{len(self._events)} events; self time in recorded events {self.recorded / 1e6:.3f} ms; "
                     f"profiled block {self.wall / 1e6:.3f} ms wall, of which {self.untracked / 1e6:.3f} ms outside "
                     "recorded events (Python between ops)")
        return Table("\n".join(lines))

    def export_chrome_trace(self, path: str) -> None:
        """Write the events in the Chrome trace event format (complete events, microseconds), which
        https://ui.perfetto.dev and chrome://tracing open."""
        pid, tid = os.getpid(), self._native_thread
        trace = [{"name": "process_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": "graphgrad"}},
                 {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": "profiled thread"}}]
        for e in sorted(self.events, key=lambda e: (e.start, e.depth)):
            args = {"site": _site_text(e.site), "bytes": e.nbytes, "self_us": e.self_time / 1e3}
            if e.shapes:
                args["shapes"] = _shapes_text(e.shapes)
            trace.append({"name": e.name, "cat": e.cat, "ph": "X", "ts": e.start / 1e3, "dur": e.dur / 1e3,
                          "pid": pid, "tid": tid, "args": args})
        with open(path, "w") as fh:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, fh)

    def __repr__(self) -> str:
        return f"<gg.Profile: {len(self._events)} events, {self.wall / 1e6:.3f} ms>"


class _Span:
    """One event around a ``with`` body (see :meth:`Profile.span`)."""

    __slots__ = ("profile", "name", "cat", "phase", "site", "begin", "previous", "mine")

    def __init__(self, profile: Profile, name: str, cat: str, phase: Optional[str], site: Any) -> None:
        self.profile, self.name, self.cat, self.phase, self.site = profile, name, cat, phase, site

    def __enter__(self) -> None:
        entered = _clock()
        profile = self.profile
        self.mine = _thread() == profile.thread
        if self.mine:
            self.previous = profile._phase
            if self.phase is not None:
                profile._phase = self.phase
            profile._open.append(0)
            lost = profile._lost
            self.begin = entered - lost
            profile._lost = lost + _clock() - entered

    def __exit__(self, *exc) -> bool:
        if self.mine:
            end = _clock()
            profile = self.profile
            profile._phase = self.previous
            profile._end(self.begin, end, self.name, self.cat, 0, self.site, ())
        return False


class Table(str):
    """A profile table: a ``str`` that shows itself as text at the interactive prompt."""

    def __repr__(self) -> str:
        return str(self)


def _site_text(site: Any) -> str:
    if not site:
        return ""
    if isinstance(site, tuple):
        return f"{site[0]}:{site[1]}"
    return site


def _short(site: str) -> str:
    """``site`` relative to the working directory when it lies below it."""
    cwd = os.getcwd() + os.sep
    return site[len(cwd):] if site.startswith(cwd) else site


def _shapes_text(shapes: tuple) -> str:
    return ", ".join("scalar" if s is None else str(tuple(s)) for s in shapes)


class _Null:
    def __enter__(self):
        return None

    def __exit__(self, *exc) -> bool:
        return False


_NULL = _Null()


def profile_span(name: str, cat: str, phase: Optional[str] = None):
    """A context recording its body as one event when a profile is open (a no-op otherwise)."""
    if not PROFILER.active:
        return _NULL
    return PROFILER.profile.span(name, cat, phase)


def record_function(name: str):
    """``with gg.record_function("data"):`` records the block as one event (category ``user``) in the open
    profile, with the ops inside it nested below; nothing happens when no profile is open."""
    if not PROFILER.active:
        return _NULL
    return PROFILER.profile.span(name, "user", site=user_site())


def profile(record_shapes: bool = True) -> Profile:
    """Start recording: ``with gg.profile() as prof: ...`` then ``print(prof.table())`` and
    ``prof.export_chrome_trace("trace.json")``. See :class:`Profile` and the module docstring.

    Args:
        record_shapes: keep each event's input shapes (shown in the Chrome trace).
    """
    return Profile(record_shapes)


__all__ = ["profile", "Profile", "record_function", "Event", "PROFILER"]
