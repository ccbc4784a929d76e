"""An example confide plugin (examples/README.md): the `rendezvous` benchmark, the
`example-echo` relay agent for confide's `demo` benchmark and the `example/parrot` model
provider, each registered by an entry point in pyproject.toml."""
