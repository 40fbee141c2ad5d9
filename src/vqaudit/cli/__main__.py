"""``python -m vqaudit.cli``: the same as the ``vqaudit`` command."""

from vqaudit.cli import main

main()
