"""One investigation: the loop and what it reads and changes (context, rules, state, evidence)."""
