"""A plugin whose declarations name backends that cannot be called: a misspelt function, a module
that does not exist, a function of the wrong signature; and an algorithm with no good backend."""
from graphops import Algorithm, Params, hookimpl


@hookimpl
def graphops_register_algorithms():
    return [
        Algorithm(name="mistarget_degree", params=Params, inputs=("graph",), outputs=("vertex", "degree"),
                  vertex_columns=("vertex",),
                  backends={"cpu": "mistarget_graphops_plugin.kernels:run",
                            "gpu": "mistarget_graphops_plugin.kernels:rnu",
                            "hybrid": "mistarget_graphops_plugin.kernals:run",
                            "networkx": "mistarget_graphops_plugin.kernels:three_arguments"}),
        Algorithm(name="mistarget_nothing", params=Params, inputs=("graph",), outputs=("vertex",),
                  backends={"cpu": "mistarget_graphops_plugin.kernels:three_arguments"}),
    ]
