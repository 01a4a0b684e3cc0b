"""Sub-commands of the `uxmon` command line; `stream.cli` assembles them."""
