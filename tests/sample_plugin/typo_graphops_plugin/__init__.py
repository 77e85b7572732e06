"""A plugin with a misspelt hook name (graphops_register_algorithm, without the s)."""
from graphops import Algorithm, Params, hookimpl


@hookimpl
def graphops_register_algorithm():
    return [Algorithm(name="typo_algo", params=Params, inputs=("graph",), backends={"cpu": "x.y:z"})]
