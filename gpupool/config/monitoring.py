"""Stack configuration of the pools' monitoring (``gpupool:monitoring``): compute debt, live.

Every pool gets a CloudWatch alarm when its GPU utilisation stays low (below ``threshold`` % for
``hours`` hours in a row: allocation that is not used), optionally notifying an SNS topic, and the
stack gets one CloudWatch dashboard with each pool's capacity, allocated GPUs, used GPUs and
utilisation: the picture ``gpupool debt --chart`` draws, live. All of it is on by default; a
stack without the key keeps validating and gets the defaults.

CloudWatch evaluates an alarm over at most seven days when its period is an hour or more
(PutMetricAlarm), so ``hours`` is at most 168.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from gpupool.config.base import ConfigModel

SNS_TOPIC_ARN = r"^arn:aws(-cn|-us-gov)?:sns:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:[A-Za-z0-9_-]{1,256}$"

PATTERN_HINTS: dict[str, str] = {
    SNS_TOPIC_ARN: "an SNS topic ARN such as arn:aws:sns:us-east-1:123456789012:gpu-alerts",
}


class LowUtilisationAlarmConfig(ConfigModel):
    """Alarm when a pool's mean GPU utilisation stays below ``threshold`` for ``hours``."""

    enabled: bool = True
    threshold: Annotated[float, Field(gt=0, lt=100, description="GPU utilisation, %")] = 20.0
    hours: Annotated[int, Field(ge=1, le=168, description="consecutive hours below")] = 6


class MonitoringConfig(ConfigModel):
    low_utilisation_alarm: LowUtilisationAlarmConfig = LowUtilisationAlarmConfig()
    alarm_topic_arn: Annotated[str | None, Field(pattern=SNS_TOPIC_ARN)] = None
    create_alarm_topic: bool = False
    dashboard: bool = True

    @field_validator("create_alarm_topic")
    @classmethod
    def _one_topic(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("alarm_topic_arn"):
            raise ValueError("expected createAlarmTopic: false when alarmTopicArn names an "
                             "existing topic (one or the other)")
        return v
