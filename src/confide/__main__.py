"""`python -m confide` runs the CLI."""

from confide.cli.main import main

main()
