"""``python -m jurist`` runs the command line."""

from jurist.cli import main

main()
