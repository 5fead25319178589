"""What turning a call name's synchronous calls asynchronous, or answering them from a shadow,
would leave of the overhead: the replay of the changed trace, at the network given."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpupool.remoting.replay import Network, Replayer, local_time_us, prepared
from gpupool.remoting.trace import ASYNC, CPU_BLOCKING, LOCAL, SYNC, Trace


@dataclass(frozen=True)
class WhatIf:
    """The replayed overhead after changing the SYNC calls of one name (or the top k)."""

    calls: str  # a call name, or "top k together"
    count: int  # SYNC calls changed
    as_async: float  # overhead with them sent without waiting (outstanding requests)
    as_local: float | None  # overhead with them answered from a shadow; None: not applicable


def what_if(trace: Trace | Replayer, net: Network, top: int = 3,
            local_us: float | None = None) -> list[WhatIf]:
    """What turning the costliest SYNC call names ASYNC, or LOCAL, would leave of the overhead.

    Names are ranked by what their SYNC calls cost at ``net`` on their own (a round trip and
    their bytes each). CPUBlocking calls wait for the GPU by definition, so they are never
    offered. A call that queues GPU work (block_us > 0) is not offered as a shadow: a shadow
    answers without the proxy, and the GPU work would be lost.
    """
    base = prepared(trace)
    trace = base.trace
    local_us = local_time_us(trace) if local_us is None else local_us
    sync = (base.kind == SYNC) & (trace.blocking != CPU_BLOCKING)
    cost = np.where(sync, net.rtt_us + 8.0 * trace.bytes_to_gpu / net.bits_per_us
                    + 8.0 * trace.bytes_from_gpu / net.back_bits_per_us, 0.0)
    per_name = np.bincount(trace.name, weights=cost, minlength=len(trace.names))
    ranked = [int(k) for k in np.argsort(-per_name, kind="stable") if per_name[k] > 0][:top]

    def after(changed: Replayer) -> float:
        return changed.run_time_us(net) / local_us - 1.0

    rows: list[WhatIf] = []
    chosen = np.zeros(len(trace), dtype=bool)
    shadowable = np.zeros(len(trace), dtype=bool)
    for k in ranked:
        calls = sync & (trace.name == k)
        gpu_work = bool((trace.block_us[calls] > 0).any())
        chosen |= calls
        if not gpu_work:
            shadowable |= calls
        rows.append(WhatIf(trace.names[k], int(calls.sum()),
                           as_async=after(base.with_kind(calls, ASYNC)),
                           as_local=None if gpu_work else after(base.with_kind(calls, LOCAL))))
    if len(ranked) > 1:
        as_async = base.with_kind(chosen, ASYNC)
        rows.append(WhatIf(f"top {len(ranked)} together", int(chosen.sum()),
                           as_async=after(as_async),
                           as_local=after(as_async.with_kind(shadowable, LOCAL))
                           if shadowable.any() else None))
    return rows
