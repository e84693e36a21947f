"""Subcommands of the `rtsched` CLI, one module each (see rtsched.cli)."""
