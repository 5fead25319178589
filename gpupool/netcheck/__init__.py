"""A network probe for remote-GPU tiers: measure the RTT and bandwidth a budget talks about.

``gpupool netcheck serve`` runs a small, bounded responder on the proxy host;
``gpupool netcheck probe HOST:PORT`` runs on the client host and measures small-message round
trips (TCP_NODELAY) and bulk throughput against it, then, given a profile, the overhead the
application would see on this network (:mod:`gpupool.remoting`). See docs/netcheck.md.
"""
