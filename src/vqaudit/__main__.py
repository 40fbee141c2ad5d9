"""``python -m vqaudit`` runs the command line."""

from vqaudit.cli import main

main()
