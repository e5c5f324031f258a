"""The warm helper: answers from the command line in interactive time.

A CLI investigation on a small table spends most of its time on fixed costs: importing pandas,
Ibis, the MCP SDK and matplotlib (about 2.5 s) and starting a sandbox server with its kernel
(about 2.5 s). The helper is a background process of the same user that has paid both already.
It keeps one worker ready: a process forked from it that has run one small investigation of
generated data through its own sandbox server, so every lazy import, cache and the kernel itself
are warm. A run goes to that worker: it takes the client's command line, working folder,
environment and terminal (stdin, stdout and stderr are passed over the socket), resets the warmed
kernel into the run's own workspace (an empty namespace), and runs exactly the code a cold
`investigate` would. The client waits and exits with the worker's code. Everything about a run
(its folder, checkpoints, resume, exit codes, what is printed) is the same as without the helper.

- `place`: where the socket lives (a folder only this user can use), which helper answers this
  installation (a key over the code, the interpreter and the sandbox's environment), and when the
  helper is used at all (`INVESTIGATOR_WARM`; by default only from an interactive terminal, not CI).
- `client`: the thin side run by `investigate`: stdlib only, so it costs nothing when no helper
  answers and the run goes on in-process as before (starting a helper as it exits).
- `wire`: the one framing the client, the helper and its worker share (JSON messages, descriptors
  passed with them, answers one per line).
- `daemon`: the helper itself (listens, forks a worker ahead of each run, never with a thread
  alive); it exits after `INVESTIGATOR_WARM_IDLE` seconds without a request.
- `warmup`: what is paid once: the imports, a reserved sandbox server, one small investigation.
- `child`: a run's own process: the client's terminal, folder, environment and arguments, then the
  command line's one entry (`front.entry.run_cli`).
- `cli`: `investigate warm status|stop`.
"""
