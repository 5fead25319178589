"""The per-call replay model: a trace's run time with a local GPU and with a remote one.

This is the model of the rperf tool that accompanies Wang et al. (arXiv 2401.13354; the authors'
``rperf/disaggregation_model/model.py``), with the changes listed in docs/remoting-model.md.
For call *i* with gap *g*, serialise *s*, deserialise *d*, process *p*, block *b*, and one-way
network times ``Nf = RTT/2 + 8·bytes_to_gpu/BW`` and ``Nb = RTT/2 + 8·bytes_from_gpu/BW``::

    issue_i    = complete_{i-1} + g_i
    arrive_i   = max(arrive_{i-1}, issue_i + s_i + RTT/2) + 8·bytes_to_gpu_i/BW   pipelined
               = max(arrive_{i-1}, issue_i + s_i) + RTT/2 + 8·bytes_to_gpu_i/BW   serialised
    served_i   = arrive_i + d_i + p_i
    queue_i    = max(served_i, queue_{i-1}) + b_i     GPUBlocking or CPUBlocking
               = queue_{i-1}                          NonBlocking
    end_i      = queue_i                              CPUBlocking (waits for the GPU)
               = served_i                             otherwise
    complete_i = end_i + Nb_i                         SYNC   (the client waits for the reply)
               = issue_i + s_i                        ASYNC  (outstanding request)
               = issue_i                              LOCAL  (shadow: no message, no proxy work)

The run ends when the last call has returned and the GPU's queue has drained:
``max(complete_n, queue_n)``. The local run is the same recurrence with every call SYNC, no
network and no (de)serialisation, which is rperf's baseline model. Pipelined latency is a FIFO
link's (propagation overlaps, transmission queues); serialised is rperf's and the authors'
emulator's (each request's RTT/2 after the previous arrival): :mod:`gpupool.remoting.latency`.

Every step is max-plus linear in the state ``(complete, arrive, queue)``: ``x_i = M_i ⊗
x_{i-1}`` with ``(A ⊗ B)_jk = max_l (A_jl + B_lk)``. Max-plus products are associative, so the
whole trace reduces to one 3x3 matrix by pairwise products, level by level, each level one
vectorised numpy pass: a million calls replay in tens of milliseconds, where a Python loop
over the calls takes over a second. ``replay_reference`` is that plain loop, kept for tests.

The run time is convex, piecewise linear and non-decreasing in the RTT and in 1/BW (a longest
path whose edge weights grow linearly with them), in either latency model: the budget's
solvers (:mod:`gpupool.remoting.solve`) rely on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from gpupool.remoting.latency import Latency
from gpupool.remoting.trace import (
    ASYNC,
    CPU_BLOCKING,
    LOCAL,
    NON_BLOCKING,
    SYNC,
    Trace,
)

NEG = -np.inf
CHUNK = 256  # calls a chunk: the loop runs over positions, numpy over chunks
Matrix = npt.NDArray[np.float64]  # shape (3, 3, n): row = new variable, column = old
Floats = npt.NDArray[np.float64]
# Step terms that no network changes, per call (padding calls leave the state as it is):
#   arrive'   = max(complete + a_c + RTT/2 + tx_to, arrive + tx_to)   (tx_to: 8·to/BW)
#               (+ RTT/2 on the second path when latency is serialised and the call is sent)
#   queue'    = max(arrive' + q_a, queue + q_q)
#   complete' = max(arrive' + c_a + RTT/2 + tx_back, queue + c_q + RTT/2 + tx_back,
#                   complete + c_0)                                    (tx_back: 8·back/BW)
TERMS: tuple[tuple[str, float], ...] = (
    ("a_c", NEG), ("to", 0.0), ("q_a", NEG), ("q_q", 0.0),
    ("c_a", NEG), ("c_q", NEG), ("c_0", 0.0), ("back", 0.0), ("sent", 0.0),
)


@dataclass(frozen=True)
class Network:
    """RTT and bandwidth; ``from_gpu_gbps`` is the GPU → client direction's bandwidth when it
    differs from ``bandwidth_gbps`` (a measured path need not be symmetric)."""

    rtt_us: float
    bandwidth_gbps: float
    from_gpu_gbps: float | None = None

    @property
    def bits_per_us(self) -> float:
        """Client → GPU, in bit/µs."""
        return self.bandwidth_gbps * 1e3  # 1 Gbit/s = 10⁹ bit/s = 10³ bit/µs

    @property
    def back_bits_per_us(self) -> float:
        """GPU → client, in bit/µs."""
        back = self.bandwidth_gbps if self.from_gpu_gbps is None else self.from_gpu_gbps
        return back * 1e3


def _terms(trace: Trace, kind: npt.NDArray[np.int8], idx: slice | npt.NDArray[np.intp]
           ) -> dict[str, Floats]:
    """The network-free terms of the calls ``idx`` when they have the given ``kind``."""
    blocking = trace.blocking[idx]
    g, s, d, p, b = (trace.gap_us[idx], trace.serialise_us[idx], trace.deserialise_us[idx],
                     trace.process_us[idx], trace.block_us[idx])
    local, sync, cpu = kind == LOCAL, kind == SYNC, blocking == CPU_BLOCKING
    queues = (blocking != NON_BLOCKING) & ~local
    served = d + p  # after arrival: unmarshal, then the API's own CPU time
    wait = np.where(cpu, b, 0.0)  # a CPUBlocking call returns once the GPU queue has drained
    return {
        "a_c": np.where(local, NEG, g + s),  # a shadowed call sends nothing
        "to": np.where(local, 0.0, trace.bytes_to_gpu[idx]),
        "q_a": np.where(queues, served + b, NEG),
        "q_q": np.where(queues, b, 0.0),
        "c_a": np.where(sync, served + wait, NEG),
        "c_q": np.where(sync & cpu, b, NEG),
        "c_0": np.where(sync, NEG, np.where(kind == ASYNC, g + s, g)),
        "back": np.where(sync, trace.bytes_from_gpu[idx], 0.0),
        "sent": np.where(local, 0.0, 1.0),  # a message crosses the link
    }


class Replayer:
    """A trace laid out for many replays: chunks of :data:`CHUNK` calls, side by side.

    Each chunk's effect on the state is a 3x3 max-plus matrix, found by pushing the three unit
    states through the chunk's calls one position at a time, every chunk at once (a numpy
    operation over chunks per position); the chunks' matrices are then multiplied together.
    The terms of each call that do not depend on the network are computed once, here.
    ``latency``: how requests in flight together pay the RTT (:mod:`gpupool.remoting.latency`).
    """

    def __init__(self, trace: Trace, kind: npt.NDArray[np.int8] | None = None,
                 latency: Latency = Latency.PIPELINED) -> None:
        self.trace = trace
        self.kind = trace.kind if kind is None else kind
        self.latency = Latency(latency)
        n = len(trace)
        self.length = min(CHUNK, max(n, 1))
        self.chunks = -(-n // self.length)
        terms = _terms(trace, self.kind, slice(None))
        self.terms = {name: self._layout(terms[name], fill) for name, fill in TERMS}

    def __len__(self) -> int:
        return len(self.trace)

    def _layout(self, values: Floats, fill: float) -> Floats:
        """(position, chunk) layout; the last chunk is padded with calls that change nothing."""
        out = np.empty((self.length, self.chunks))
        full = len(values) // self.length
        out[:, :full] = values[: full * self.length].reshape(full, self.length).T
        if full < self.chunks:
            tail = values[full * self.length:]
            out[:, full] = fill
            out[: len(tail), full] = tail
        return out

    def with_kind(self, calls: npt.NDArray[np.bool_], kind: int) -> Replayer:
        """The same trace with the selected calls turned into ``kind`` (a what-if)."""
        new = self.with_latency(self.latency)
        new.kind = self.kind.copy()
        new.kind[calls] = kind
        idx = np.flatnonzero(calls)
        terms = _terms(self.trace, new.kind[idx], idx)
        flat = (idx % self.length) * self.chunks + idx // self.length
        new.terms = {}
        for name, _ in TERMS:
            arr = self.terms[name].copy()
            arr.reshape(-1)[flat] = terms[name]
            new.terms[name] = arr
        return new

    def with_latency(self, latency: Latency) -> Replayer:
        """The same calls replayed under another latency model (the terms are shared)."""
        new = object.__new__(Replayer)
        new.trace, new.length, new.chunks = self.trace, self.length, self.chunks
        new.kind, new.terms, new.latency = self.kind, self.terms, Latency(latency)
        return new

    def run_time_us(self, net: Network) -> float:
        """Run time (µs) with a remote GPU over ``net``."""
        t = self.terms
        half = net.rtt_us / 2.0
        w = 8.0 / net.bits_per_us  # µs per byte
        tx_to = t["to"] * w
        from_c = t["a_c"] + tx_to
        from_c += half
        if self.latency is Latency.SERIALISED:  # the previous arrival, then RTT/2 and the bytes
            tx_to += t["sent"] * half
        tx_back = t["back"] * (8.0 / net.back_bits_per_us)
        tx_back += half
        c_a = t["c_a"] + tx_back
        c_q = t["c_q"] + tx_back
        q_a, q_q, c_0 = t["q_a"], t["q_q"], t["c_0"]
        shape = (3, self.chunks)
        complete, arrive, queue = np.full(shape, NEG), np.full(shape, NEG), np.full(shape, NEG)
        complete[0], arrive[1], queue[2] = 0.0, 0.0, 0.0  # unit states, one per row
        new_a, new_c, tmp = np.empty(shape), np.empty(shape), np.empty(shape)
        for j in range(self.length):
            np.add(complete, from_c[j], out=new_a)
            np.add(arrive, tx_to[j], out=tmp)
            np.maximum(new_a, tmp, out=new_a)
            np.add(new_a, c_a[j], out=new_c)
            np.add(queue, c_q[j], out=tmp)
            np.maximum(new_c, tmp, out=new_c)
            np.add(complete, c_0[j], out=tmp)
            np.maximum(new_c, tmp, out=new_c)
            np.add(queue, q_q[j], out=queue)
            np.add(new_a, q_a[j], out=tmp)
            np.maximum(queue, tmp, out=queue)
            arrive, new_a = new_a, arrive
            complete, new_c = new_c, complete
        # chunk k's matrix: row = variable (complete, arrive, queue), column = unit state
        chunks = np.stack([complete, arrive, queue])
        state = _reduce(chunks)[:, :, 0].max(axis=1)  # applied to the start state (0, 0, 0)
        return float(max(state[0], state[2], 0.0))


def _product(later: Matrix, earlier: Matrix) -> Matrix:
    """Max-plus products ``later[..., k] ⊗ earlier[..., k]`` for every k, vectorised."""
    out = np.empty(earlier.shape)
    tmp = np.empty(earlier.shape[2])
    for i in range(3):
        for j in range(3):
            o = out[i, j]
            np.add(later[i, 0], earlier[0, j], out=o)
            np.add(later[i, 1], earlier[1, j], out=tmp)
            np.maximum(o, tmp, out=o)
            np.add(later[i, 2], earlier[2, j], out=tmp)
            np.maximum(o, tmp, out=o)
    return out


def _identity(n: int) -> Matrix:
    m = np.full((3, 3, n), NEG)
    for k in range(3):
        m[k, k] = 0.0
    return m


def _reduce(m: Matrix) -> Matrix:
    """One (3, 3, 1) matrix: the product of all steps, last ⊗ … ⊗ first."""
    while m.shape[2] > 1:
        if m.shape[2] % 2:
            m = np.concatenate([m, _identity(1)], axis=2)
        m = _product(m[:, :, 1::2], m[:, :, 0::2])
    return m


def local_trace(trace: Trace) -> Trace:
    """rperf's baseline as a trace: every call waits for itself, nothing is (de)serialised."""
    zero = np.zeros(len(trace))
    return replace(trace, kind=np.full(len(trace), SYNC, dtype=np.int8),
                   serialise_us=zero, deserialise_us=zero,
                   bytes_to_gpu=zero, bytes_from_gpu=zero)


def local_time_us(trace: Trace) -> float:
    """Run time (µs) of the trace on a local GPU."""
    return Replayer(local_trace(trace)).run_time_us(Network(0.0, math.inf))


def run_time_us(trace: Trace | Replayer, net: Network | None,
                latency: Latency = Latency.PIPELINED) -> float:
    """Run time (µs) with a remote GPU over ``net``, or on a local GPU when ``net`` is None
    (``latency`` applies to a trace; a :class:`Replayer` carries its own)."""
    if net is None:
        return local_time_us(trace.trace if isinstance(trace, Replayer) else trace)
    return prepared(trace, latency).run_time_us(net)


def replay_reference(trace: Trace, net: Network | None,
                     latency: Latency = Latency.PIPELINED) -> float:
    """The same model as a plain loop over the calls: slow, obvious, for tests."""
    complete = arrive = queue = 0.0
    for i in range(len(trace)):
        kind = SYNC if net is None else int(trace.kind[i])
        blocking = int(trace.blocking[i])
        g, p, b = trace.gap_us[i], trace.process_us[i], trace.block_us[i]
        if net is None:
            s = d = half = tx_to = tx_from = 0.0
        else:
            s, d = trace.serialise_us[i], trace.deserialise_us[i]
            half = net.rtt_us / 2
            tx_to = trace.bytes_to_gpu[i] * 8 / net.bits_per_us
            tx_from = trace.bytes_from_gpu[i] * 8 / net.back_bits_per_us
        issue = complete + g
        if kind == LOCAL:
            complete = issue
            continue
        if latency is Latency.SERIALISED:
            arrive = max(arrive, issue + s) + half + tx_to
        else:
            arrive = max(arrive, issue + s + half) + tx_to
        served = arrive + d + p
        end = served
        if blocking != NON_BLOCKING:
            queue = max(served, queue) + b
            if blocking == CPU_BLOCKING:
                end = queue
        complete = end + half + tx_from if kind == SYNC else issue + s
    return max(complete, queue)


def prepared(trace: Trace | Replayer, latency: Latency = Latency.PIPELINED) -> Replayer:
    """A :class:`Replayer` for the trace under ``latency`` (itself when it is one already)."""
    return trace if isinstance(trace, Replayer) else Replayer(trace, latency=latency)


def overhead(trace: Trace | Replayer, net: Network, local_us: float | None = None,
             latency: Latency = Latency.PIPELINED) -> float:
    """Slowdown of the remote run against the local one (0.05 = 5 %; negative = faster)."""
    rp = prepared(trace, latency)
    local_us = local_time_us(rp.trace) if local_us is None else local_us
    return rp.run_time_us(net) / local_us - 1.0
