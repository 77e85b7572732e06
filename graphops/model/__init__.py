"""Layer 2, model: graphs and what they are made of — vertex ids (:mod:`~graphops.model.ids`),
frame helpers, CSR views and their host build, :class:`~graphops.model.graph.Graph`,
:class:`~graphops.model.graphset.GraphSet`, vertex pairs, Dask edge frames, and conversions
to and from networkx and cuGraph. Imports only :mod:`graphops.base`."""
