"""The kit's per-object Kubernetes rules at admission: ValidatingAdmissionPolicies from the
rule modules (:mod:`.generate`), each rule's CEL beside it (:mod:`.cel`), the kinds' pod
templates in CEL (:mod:`.kinds`), waivers as matchConditions (:mod:`.waivers`), and a CEL
evaluator with Kubernetes' libraries that judges an object as the API server would
(:mod:`.evaluate`, :mod:`.library`)."""
