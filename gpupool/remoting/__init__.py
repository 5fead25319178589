"""GPU API remoting: application profiles and the network budget they need.

With API remoting a CPU-only client sends its CUDA calls to a proxy host that owns the GPU, so
every synchronous call pays a network round trip and every byte crosses the network. This
package turns an application's profile (its call counts and bytes, from a local run) into the
round-trip time and bandwidth that keep the slowdown within a budget ε (Wang et al., arXiv
2401.13354). No Pulumi, boto3 or numpy at import time: the infra program and the policies
import it too.
"""

from gpupool.remoting.budget import bandwidth_min_gbps, predicted_overhead, rtt_max_us
from gpupool.remoting.profile import Profile, load_profile

__all__ = [
    "Profile",
    "bandwidth_min_gbps",
    "load_profile",
    "predicted_overhead",
    "rtt_max_us",
]
