"""The front doors: the CLI, the notebook API and magics, live progress."""
