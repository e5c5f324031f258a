"""Write the worked examples (docs/examples/{daily,monthly,yearly}.md) from real runs.

    python docs/examples/generate.py            # regenerate the pages
    python docs/examples/generate.py --check    # exit 1 if a page no longer matches a fresh run

Each example makes a small deterministic table of one grain with the project's own generator
(`investigator.sources.synth.generate_shaped`, one planted change), runs the installed `investigate`
on it in a scratch folder (no warm helper, no memory from earlier runs, a fixed terminal width), and
writes the command and everything it printed. `--check` compares a fresh run with the page, ignoring
only what differs between any two runs: the run id and the seconds on the timing line.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from investigator.sources.synth import generate_shaped

HERE = Path(__file__).resolve().parent
WIDTH = 100


@dataclass(frozen=True)
class Example:
    grain: str  # the page's name and the generator's shape
    file: str  # the data file the command names
    plant: str
    segment: dict[str, str]
    factor: float | None
    flags: tuple[str, ...]
    story: str  # what was planted, in words, for the page


EXAMPLES = (
    Example(
        grain="daily",
        file="visits_daily.csv",
        plant="segment_change",
        segment={"region": "west"},
        factor=0.6,
        flags=("--metric", "value", "--window", "7d", "--dimensions", "industry,region"),
        story="400 days of a daily table, one row per day, industry and region; in the last 7 days "
        "every industry in `region=west` fell to 60% of its usual level.",
    ),
    Example(
        grain="monthly",
        file="employment_monthly.parquet",
        plant="segment_change",
        segment={"industry": "health"},
        factor=0.5,
        flags=("--metric", "value", "--window", "1mo", "--dimensions", "industry,region"),
        story="96 months (month-end dates, across leap years), one row per month, industry and "
        "region; in the last month `industry=health` halved in every region.",
    ),
    Example(
        grain="yearly",
        file="output_yearly.csv",
        plant="segment_change",
        segment={"industry": "construction"},
        factor=1.8,
        flags=(
            "--metric",
            "value",
            "--time-column",
            "year",
            "--window",
            "1y",
            "--dimensions",
            "industry,region",
        ),
        story="93 years (an integer `year` column, 1931..2023), one row per year, industry and "
        "region; in the last year `industry=construction` rose to 1.8 times its level in every region.",
    ),
)


def run(example: Example, scratch: Path) -> tuple[str, str, str]:
    """Make the example's data in `scratch`, run `investigate` there; (command, output, data head)."""
    frame, _truth = generate_shaped(
        example.grain, plant=example.plant, seed=0, segment=example.segment, factor=example.factor,
        attribute=False,
    )  # fmt: skip
    path = scratch / example.file
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    command = ["investigate", "--data", example.file, *example.flags]
    exe = Path(sys.executable).parent / "investigate"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INVESTIGATOR_", "OPENAI_"))} | {
        "COLUMNS": str(WIDTH),
        "INVESTIGATOR_WARM": "0",
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
    done = subprocess.run(
        [str(exe) if exe.is_file() else "investigate", *command[1:]],
        cwd=scratch, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        said = done.stdout + done.stderr
        raise SystemExit(f"{example.grain}: investigate exited {done.returncode}:\n{said}")
    head = frame.head(6).to_string(index=False)
    output = "\n".join(line.rstrip() for line in done.stdout.rstrip().splitlines())
    return " ".join(command), output, head


def page(example: Example, command: str, output: str, head: str) -> str:
    return f"""# Worked example: {example.grain} data

<!-- Written by docs/examples/generate.py from a real run; do not edit by hand. -->

The data: {example.story} It is made by the project's own generator
(`investigator.sources.synth.generate_shaped("{example.grain}", plant="{example.plant}", seed=0, ...)`),
so the answer is known. Its first rows:

```
{head}
```

The command and everything it printed:

```
$ {command}
{output}
```

The seconds on the last line are those of the run that wrote this page, on a shared 2-core machine;
measured timings are on [speed](../speed.md). Run `python docs/examples/generate.py` to run it again
and rewrite this page.
"""


def normalise(text: str) -> str:
    """Drop what differs between two runs of the same question: run ids, seconds, and where the
    terminal wrapped the timing line (its length changes with the seconds)."""
    text = re.sub(r"\d{8}-\d{6}-[0-9a-f]{6}", "RUN", text)
    text = re.sub(r"in [0-9.]+s \(start [^)]*\)", "in Ns (...)", text)
    return re.sub(r"\d+ iterations in Ns \(\.\.\.\)[^`]*?RUN", lambda m: " ".join(m[0].split()), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the pages; write nothing")
    args = parser.parse_args(argv)
    stale = []
    for example in EXAMPLES:
        scratch = Path(tempfile.mkdtemp(prefix=f"investigator-example-{example.grain}-"))
        try:
            text = page(example, *run(example, scratch))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        target = HERE / f"{example.grain}.md"
        if args.check:
            old = target.read_text() if target.exists() else ""
            if normalise(old) != normalise(text):
                stale.append(example.grain)
                sys.stdout.writelines(
                    difflib.unified_diff(
                        normalise(old).splitlines(True),
                        normalise(text).splitlines(True),
                        str(target),
                        "a fresh run",
                    )
                )
        else:
            target.write_text(text)
            print(f"wrote {target}")
    if stale:
        print(f"stale: {', '.join(stale)}: run python docs/examples/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
