"""`python -m investigator` is the `investigate` command: the same entry (the warm helper when one
answers, the exit that skips the interpreter's teardown), so the process a developer runs this way
is the one a user at a terminal gets."""

from investigator.front.entry import main

main()
