"""`python -m roofline ...`: the `roofline` command (`roofline.cli`)."""

from .cli import main

main()
