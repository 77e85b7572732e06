"""Layer 3, host: the plugin host — what a plugin registers (:mod:`~graphops.host.algorithm`:
Algorithm, Backend, Input, Reader, Command, Generator, Params, Result), the hook specifications
(:mod:`~graphops.host.hookspecs`, the hooks' reference docs), the plugin manager, the registry,
graphops' own built-in registrations, and pydantic messages. Imports base and model."""
