"""Compute debt: what each GPU pool and team is allocated, really uses, and owes.

Modules by job: ``window`` (the time window), ``aws`` (clients, call counting, errors),
``discover`` (the GPU groups), ``metrics`` (batched GetMetricData), ``figures`` (the GPU-hour
arithmetic), ``advice`` (recommendations), ``optimizer`` (AWS Compute Optimizer), ``report``
(the document), ``render`` (text and CSV), ``chart`` (matplotlib) and ``snapshot`` (reading a
report back for the policy engine; it imports neither boto3 nor the rest of this package).
Nothing is imported here, so ``gpupool.debt.snapshot`` stays light.
"""
