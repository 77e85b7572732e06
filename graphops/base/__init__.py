"""Layer 1, base: what every other layer stands on — devices and frame families
(:mod:`~graphops.base.device`), the per-user cache folder, Numba and CUDA loaders
(:mod:`~graphops.base.jit`, :mod:`~graphops.base.cuda`), chunked interruptible work with
progress (:mod:`~graphops.base.work`), timing and small statistics. Imports no other layer."""
