"""Layer 5, engine: running an algorithm — dispatch (plan, choose a backend, execute, wrap the
result in the caller's frame family; :mod:`~graphops.engine.dispatch`) over two executors, one
device here or a Dask cluster's workers (:mod:`~graphops.engine.cluster`, with the column
slices of Dask edge frames and the wire format of graphs), Gram-matrix helpers, and the test
gate plugins share (:mod:`~graphops.engine.testing`). Imports base, model, host and io."""
