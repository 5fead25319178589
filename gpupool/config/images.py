"""``gpupool:images``: the machine image each architecture's GPU hosts boot, pinned per stack.

Without a pin a pool boots the AWS Deep Learning Base OSS NVIDIA Driver AMI that AWS's public
``latest`` SSM parameter names at its first deployment, and keeps it: the launch template
ignores later releases, so a new DLAMI never rolls every pool on the next ``pulumi up``. Pinning
an image id moves the pools to it deliberately, through an instance refresh that keeps capacity
(see README, "Moving the GPU image").
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

AMI_ID = r"^ami-[0-9a-f]{8,17}$"


class ImagePins(BaseModel):
    """Image id per CPU architecture; an architecture not named here follows the DLAMI."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel,
                              populate_by_name=True, str_strip_whitespace=True)

    x86_64: Annotated[str | None, Field(pattern=AMI_ID, alias="x86_64")] = None
    arm64: Annotated[str | None, Field(pattern=AMI_ID, alias="arm64")] = None

    def for_arch(self, arch: str) -> str | None:
        return self.x86_64 if arch == "x86_64" else self.arm64
