"""How the network's latency is charged to requests that are in flight together.

A burst of asynchronous calls (kernel launches, outstanding requests) sends one request after
another without waiting. Two models of what the link does with them:

- ``pipelined``: a FIFO link (TCP or RDMA) queues *transmission* (bytes / bandwidth) but
  overlaps *propagation*: every request reaches the proxy RTT/2 after it was sent, however many
  are in flight. The least a layer that keeps requests in flight can pay.
- ``serialised``: each request's RTT/2 starts when the previous one has arrived, so N requests
  in a burst take N x RTT/2 to reach the proxy. This is the authors' own model (Wang et al.,
  arXiv 2401.13354: rperf's ``start = max(start_prev, issue + serialise) + Network`` in
  ``rperf/disaggregation_model/model.py``) and what their network emulator does (each message's
  delivery time is the previous delivery plus RTT/2 and its bytes, ``calculate_ts`` in
  ``network/src/ringbufferchannel/emulator.rs`` of chengchen666/PhoenixOS-Remoting), which they
  report within 5 % of their real testbed.

Serialised is never faster: ``max(a, b) + h ≥ max(a, b + h)`` for every request. It is the
default of ``gpupool remoting``; docs/remoting-model.md says which to believe when.
"""

from __future__ import annotations

from enum import StrEnum


class Latency(StrEnum):
    PIPELINED = "pipelined"
    SERIALISED = "serialised"


DEFAULT = Latency.SERIALISED  # the authors' model, and the upper of the two: a gate fails closed

LABELS = {
    Latency.PIPELINED: "pipelined: requests in flight overlap their RTT/2",
    Latency.SERIALISED: "serialised: each request's RTT/2 after the previous arrival (the "
                        "authors' model)",
}
