"""`python -m medlens` is the `medlens` command."""

from medlens.cli import main

main()
