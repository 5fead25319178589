"""boto3 clients for the report, counting every API call, and AWS errors as one-line input errors.

The standard credential chain and ``AWS_ENDPOINT_URL`` apply (a fresh boto3 session reads the
environment when the command runs). Throttling is retried by botocore's ``standard`` retry mode:
exponential backoff with jitter, up to ``MAX_ATTEMPTS`` attempts per call; every attempt is
counted, so the report says how many requests it really sent.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gpupool.errors import InputError

MAX_ATTEMPTS = 8  # attempts per call, the first included: 7 retries (backoff capped at 20 s)
SERVICES = ("autoscaling", "ec2", "cloudwatch", "compute-optimizer")
T = TypeVar("T")


class NotTheDocument(Exception):
    """A 200 answer whose body is not the API's document (HTML from a proxy, empty, cut off).

    botocore reads an HTML or empty body of a CBOR/JSON API as an empty answer, which would
    look like "no group metrics"; it is a failed read, never an answer.
    """


@dataclass
class ApiCalls:
    """Calls (one per operation invoked) and requests (every attempt, retries included)."""

    calls: Counter[str] = field(default_factory=Counter)
    requests: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def on_call(self, model: Any, **_: Any) -> None:
        with self._lock:
            self.calls[model.name] += 1

    def on_send(self, event_name: str, **_: Any) -> None:
        # before-send.<service>.<Operation>, emitted for every attempt (retries included)
        with self._lock:
            self.requests[event_name.rsplit(".", 1)[-1]] += 1

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    @property
    def retries(self) -> int:
        return sum(self.requests.values()) - self.total

    def to_dict(self) -> dict[str, Any]:
        return {"by_operation": dict(sorted(self.calls.items())), "retries": max(self.retries, 0)}


@dataclass
class Clients:
    autoscaling: Any
    ec2: Any
    cloudwatch: Any
    compute_optimizer: Any
    calls: ApiCalls
    region: str
    account: str | None = None  # set when reading many accounts (gpupool.debt.fleet)

    @property
    def endpoint(self) -> str:
        return str(self.cloudwatch.meta.endpoint_url)


@functools.cache
def known_regions() -> frozenset[str]:
    """Every region botocore knows for the services the report reads, in every partition."""
    import boto3

    session = boto3.session.Session()
    out: set[str] = set()
    for partition in session.get_available_partitions():
        out.update(session.get_available_regions("autoscaling", partition_name=partition))
    return frozenset(out)


_CREATE = threading.Lock()  # botocore sessions are not thread-safe while they make clients


def make_clients(region: str | None, session: Any = None, deadline: Any = None,
                 credentials: dict[str, str] | None = None) -> Clients:
    """Clients for ``region`` (default: the environment's), with call counting on all of them
    and, when given, the :class:`~gpupool.debt.deadline.Deadline` checked before each attempt.

    ``credentials`` (``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``:
    an assumed role's) sign every call instead of the session's; the clients are made under a
    lock, so threads may share one session (and its loaded service models), then use their
    clients concurrently, which botocore clients allow."""
    import boto3
    from botocore.config import Config

    session = session or boto3.session.Session()
    region = region or session.region_name or "us-east-1"
    known = known_regions()
    if region not in known:
        raise InputError(f"--region {region}: expected an AWS region such as us-east-1 "
                         f"(botocore knows {len(known)} regions; a brand-new one needs a newer "
                         "boto3)")
    calls = ApiCalls()
    config = Config(retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"},
                    connect_timeout=5, read_timeout=60)
    # Compute Optimizer is a nice-to-have: no retries, so an account without it costs one call.
    quick = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=5,
                   read_timeout=30)

    def client(service: str, cfg: Config) -> Any:
        with _CREATE:
            c = session.client(service, region_name=region, config=cfg, **(credentials or {}))
        c.meta.events.register("before-call", calls.on_call)
        c.meta.events.register("before-send", calls.on_send)
        if deadline is not None:
            c.meta.events.register("before-send", deadline.on_send)
        return c

    return Clients(
        autoscaling=client("autoscaling", config),
        ec2=client("ec2", config),
        cloudwatch=client("cloudwatch", config),
        compute_optimizer=client("compute-optimizer", quick),
        calls=calls,
        region=region,
    )


@contextmanager
def aws_errors(what: str, endpoint: str) -> Iterator[None]:
    """AWS failures while reading ``what`` → one :class:`InputError` line, no traceback."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
    )
    from botocore.parsers import ResponseParserError

    try:
        yield
    except (NoCredentialsError, PartialCredentialsError):
        raise InputError(
            "AWS credentials: expected credentials to read autoscaling groups and CloudWatch "
            "metrics (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO, or an "
            "instance role)"
        ) from None
    except NoRegionError:
        raise InputError("--region: expected a region (or AWS_REGION / AWS_DEFAULT_REGION)"
                         ) from None
    except NotTheDocument as e:
        raise InputError(f"{endpoint}: {what} answered with a body that is not the API's "
                         f"document ({e}: an HTML page from a proxy, an empty or a truncated "
                         "body?); nothing was read") from None
    except ResponseParserError:
        raise InputError(f"{endpoint}: {what} answered with a body that cannot be parsed (an "
                         "HTML page from a proxy, an empty or a truncated body?); nothing was "
                         "read") from None
    except KeyError as e:
        if not _raised_in_botocore(e):
            raise
        raise InputError(f"{endpoint}: {what} answered without its result element ({e}): an "
                         "HTML page from a proxy, or not the API's document; nothing was read"
                         ) from None
    except ClientError as e:
        err = e.response.get("Error", {})
        code, message = err.get("Code", "?"), err.get("Message", "")
        raise InputError(f"{endpoint}: {what} refused: {code}: {message}".rstrip(": ")
                         ) from None
    except BotoCoreError as e:
        raise InputError(f"{endpoint}: {what} failed: {e}") from None


def _raised_in_botocore(e: BaseException) -> bool:
    """A KeyError from botocore's response parser (a query-protocol answer without its
    ``<Operation>Result`` element), not one of ours."""
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is not None and "botocore" in last.tb_frame.f_code.co_filename


def expect(page: Any, key: str, operation: str) -> Any:
    """``page[key]``: a page without the key the API always sends is not its document."""
    if not isinstance(page, dict) or key not in page:
        raise NotTheDocument(f"no {key} in the {operation} answer")
    return page[key]


def paginate(client: Any, operation: str, key: str, **kwargs: Any) -> Iterator[Any]:
    """Items under ``key`` of every page of ``operation`` (botocore paginator; it stops on a
    repeated token itself). A page without ``key`` is not the API's document."""
    for page in client.get_paginator(operation).paginate(**kwargs):
        yield from expect(page, key, operation) or ()


def chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


Progress = Callable[[int], None]  # advance a progress bar by n


def no_progress(_: int) -> None:
    return None
