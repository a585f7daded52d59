"""``python -m receval``: the command line, as the installed ``receval`` command runs it."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
