"""A moto server holding a generated fleet of GPU pools, for the rightsize bench (a child process).

Built in moto's own backends in this process, not through 5,000 HTTP calls (CreateAutoScalingGroup
over HTTP took 182 s for 1,000 groups last session): each group is created by the autoscaling
backend's ``create_auto_scaling_group`` (moto's own group objects) and each pool's history by
the CloudWatch backend's ``put_metric_data``. The groups say MinSize and DesiredCapacity 2 but
moto launches no EC2 instance for them: the kit counts instances in service from CloudWatch
(``GroupInServiceInstances``), never from EC2, and moto's RunInstances scans its 1,300 bundled
AMIs with fnmatch filters for every instance (about 0.09 s each: 2,000 instances were most of
the 182 s). Then the server answers over HTTP on 127.0.0.1 as any moto server does,
with two additions, both said in bench/README.md:

- every request is counted by service and operation (``GET /bench/calls``; reset with
  ``POST /bench/calls``): the bench's API-call figure, independent of the kit's own count;
- Compute Optimizer (not in moto) answers as for an account that has not opted in (one
  call of ``gpupool debt``; rightsize does not ask);
- GetMetricData looks each query's series up by (metric, dimensions) before moto's own code
  computes the statistics: moto scans every stored datum for every query and bucket
  (O(queries x buckets x datums): 4,000 queries over 8,000 datums did not finish last session).
  moto's ``get_metric_data`` still computes every answer, one query at a time over that query's
  datums only; at start the answers of a sample of queries are checked equal to moto's
  unindexed ones (``--check``).

    python bench/moto_fleet.py --pools 1000 --hours 2 --end 2026-12-02T18:00:00Z
prints ``READY <port> <build seconds>`` then serves until stdin closes.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

ENVIRONMENTS = ("dev", "staging", "prod", "sandbox", "test")
ACCOUNT = "123456789012"  # moto's default account
REGION = "us-east-1"


def pool_names(per_stack: int) -> list[tuple[str, str, int]]:
    """(environment, pool name, utilisation %) of every pool, as the stacks name them."""
    return [(env, f"p{i:03d}", 2 + (e * per_stack + i) % 39)
            for e, env in enumerate(ENVIRONMENTS) for i in range(per_stack)]


# -- the fleet, in moto's backends ---------------------------------------------------------------


def build(per_stack: int, start: datetime, hours: int) -> None:
    from moto.autoscaling.models import autoscaling_backends
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.ec2.models import ec2_backends

    ec2 = ec2_backends[ACCOUNT][REGION]
    asg = autoscaling_backends[ACCOUNT][REGION]
    cw = cloudwatch_backends[ACCOUNT][REGION]
    subnet = sorted(s.id for s in ec2.describe_subnets())[0]
    ec2.create_launch_template("gpu", "bench fleet", {"ImageId": "ami-12c6146b",
                                                      "InstanceType": "g4dn.xlarge"}, {})
    datums: dict[str, list[dict[str, Any]]] = {"AWS/AutoScaling": [], "CWAgent": []}
    for env, pool, util in pool_names(per_stack):
        name = f"{env}-{pool}"
        tags = {"environment": env, "gpupool:pool": pool, "team": "ml-platform",
                "managed-by": "gpupool"}
        group = asg.create_auto_scaling_group(
            name=name, availability_zones=[], desired_capacity=0, max_size=8, min_size=0,
            launch_config_name="", launch_template={}, vpc_zone_identifier=subnet,
            default_cooldown=None, health_check_period=None, health_check_type=None,
            load_balancers=[], target_group_arns=[], placement_group=None,
            termination_policies=[],
            tags=[{"Key": k, "Value": v, "PropagateAtLaunch": True, "ResourceId": name,
                   "ResourceType": "auto-scaling-group"} for k, v in tags.items()],
            mixed_instances_policy={"LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateName": "gpu",
                                                "Version": "$Latest"},
                "Overrides": [{"InstanceType": "g4dn.xlarge"}]}})
        group.min_size = group.desired_capacity = 2  # what DescribeAutoScalingGroups says;
        # no EC2 instances behind it (see the module docstring)
        dims = [{"Name": "AutoScalingGroupName", "Value": name}]
        for h in range(hours):
            when = (start + timedelta(hours=h, minutes=5)).replace(tzinfo=None)  # as moto's
            for ns, metric, value in (("AWS/AutoScaling", "GroupInServiceInstances", 2),
                                      ("AWS/AutoScaling", "GroupMaxSize", 8),
                                      ("CWAgent", "nvidia_smi_utilization_gpu", util),
                                      ("CWAgent", "nvidia_smi_utilization_memory", 30)):
                datums[ns].append({"MetricName": metric, "Dimensions": dims,
                                   "Timestamp": when, "Value": float(value)})
    for ns, items in datums.items():
        cw.put_metric_data(ns, items)


# -- GetMetricData by series ------------------------------------------------------------------


def _key(name: str, dims: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    pairs = [(d.name, d.value) if hasattr(d, "name") else (d["Name"], d["Value"]) for d in dims]
    return name, tuple(sorted(pairs))


def index_get_metric_data() -> Any:
    """Replace CloudWatchBackend.get_metric_data by the series-indexed one; return moto's own."""
    from moto.cloudwatch.models import CloudWatchBackend

    original = CloudWatchBackend.get_metric_data
    lock = threading.Lock()

    def indexed(self: Any, queries: list[dict[str, Any]], start_time: datetime,
                end_time: datetime, scan_by: str = "TimestampAscending") -> Any:
        plain = all("MetricStat" in q and q["MetricStat"]["Metric"].get("Dimensions")
                    for q in queries)
        if not plain:  # expressions, or a query without dimensions: moto's own, unindexed
            return original(self, queries, start_time, end_time, scan_by)
        with lock:
            by: dict[Any, list[Any]] = defaultdict(list)
            for md in CloudWatchBackend.get_all_metrics(self):
                by[_key(md.name, md.dimensions)].append(md)
            out: list[dict[str, Any]] = []
            try:
                for q in queries:
                    m = q["MetricStat"]["Metric"]
                    subset = by.get(_key(m["MetricName"], m["Dimensions"]), [])
                    self.get_all_metrics = lambda subset=subset: subset
                    out += original(self, [q], start_time, end_time, scan_by)
            finally:
                self.__dict__.pop("get_all_metrics", None)
            return out

    CloudWatchBackend.get_metric_data = indexed  # type: ignore[method-assign]
    return original


def check_index(original: Any, per_stack: int, start: datetime, hours: int, sample: int) -> int:
    """Moto's unindexed answers equal the indexed ones for ``sample`` queries (each series)."""
    from moto.cloudwatch.models import cloudwatch_backends

    cw = cloudwatch_backends[ACCOUNT][REGION]
    names = pool_names(per_stack)
    step = max(len(names) // sample, 1)
    queries = []
    for i, (env, pool, _) in enumerate(names[::step][:sample]):
        for j, (ns, metric) in enumerate((("AWS/AutoScaling", "GroupInServiceInstances"),
                                          ("CWAgent", "nvidia_smi_utilization_gpu"))):
            queries.append({"Id": f"q{i}_{j}", "MetricStat": {
                "Metric": {"Namespace": ns, "MetricName": metric, "Dimensions": [
                    {"Name": "AutoScalingGroupName", "Value": f"{env}-{pool}"}]},
                "Period": 3600, "Stat": "Average"}})
    start = start.replace(tzinfo=None)  # moto's parsed request times are naive UTC
    end = start + timedelta(hours=hours)
    mine = cw.get_metric_data(queries, start, end)
    theirs = original(cw, queries, start, end)
    if mine != theirs or not all(r["values"] for r in mine):
        raise SystemExit("the indexed GetMetricData answers differ from moto's own")
    return len(queries)


# -- counting every request -------------------------------------------------------------------


class Counting:
    """WSGI middleware: each request counted as service.Operation (the form's Action, the JSON
    protocols' X-Amz-Target, or smithy-rpc-v2-cbor's /service/…/operation/<Op> path)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        if path == "/bench/calls":
            if environ["REQUEST_METHOD"] == "POST":
                with self.lock:
                    self.calls.clear()
            with self.lock:
                body = json.dumps(dict(sorted(self.calls.items()))).encode()
            start_response("200 OK", [("Content-Type", "application/json")])
            return [body]
        op = self._operation(environ, path)
        with self.lock:
            self.calls[op] += 1
        if op.startswith("compute-optimizer."):  # not in moto: an account not opted in
            start_response("400 Bad Request", [("Content-Type", "application/x-amz-json-1.0")])
            return [json.dumps({"__type": "OptInRequiredException",
                                "message": "bench: not opted in"}).encode()]
        return self.app(environ, start_response)

    @staticmethod
    def _operation(environ: dict[str, Any], path: str) -> str:
        auth = environ.get("HTTP_AUTHORIZATION", "")
        service = auth.split("/")[3] if auth.count("/") >= 4 else "?"
        target = environ.get("HTTP_X_AMZ_TARGET")
        if target:
            return f"{service}.{target.rsplit('.', 1)[-1]}"
        if "/operation/" in path:
            return f"{service}.{path.rsplit('/', 1)[-1]}"
        query = parse_qs(environ.get("QUERY_STRING", ""))
        if "Action" not in query and environ.get("REQUEST_METHOD") == "POST":
            import io

            size = int(environ.get("CONTENT_LENGTH") or 0)
            raw = environ["wsgi.input"].read(size)
            environ["wsgi.input"] = io.BytesIO(raw)
            query = parse_qs(raw.decode("utf-8", "replace"))
        return f"{service}.{query.get('Action', ['?'])[0]}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pools", type=int, required=True, help="in all (five environments)")
    p.add_argument("--hours", type=int, required=True)
    p.add_argument("--end", required=True, help="the window's end, on the hour (ISO 8601)")
    p.add_argument("--check", type=int, default=20, help="pools whose answers are compared")
    args = p.parse_args()
    per_stack = args.pools // len(ENVIRONMENTS)
    end = datetime.fromisoformat(args.end.replace("Z", "+00:00")).astimezone(UTC)
    start = end - timedelta(hours=args.hours)

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    t0 = time.perf_counter()
    build(per_stack, start, args.hours)
    original = index_get_metric_data()
    checked = check_index(original, per_stack, start, args.hours, args.check)
    built = time.perf_counter() - t0
    class Quiet(MotoRequestHandler):  # type: ignore[misc]
        def log_request(self, *_: Any) -> None:  # errors are still logged
            pass

    app = Counting(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, True, request_handler=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY {server.server_address[1]} {built:.2f} {checked}", flush=True)
    sys.stdin.read()  # the bench closes it when done
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
