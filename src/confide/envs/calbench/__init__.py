"""CalBench: multi-agent calendar scheduling under private information (calbench.md).

Registers `SPEC` (benchmark id `calbench`): suites `canonical` (section 4.1, default) and
`tiny`, or `--tasks FILE` (our JSONL or the public fixture format); reference lineups
`imap` (D.1), `sdmap` (D.2), `dsm-welfare` and `dsm-private` (D.3), all four compared when
no lineup is given (the Table 2 run); the three communication conditions of A.3; per-seat rows
and per-game metrics of section 4.2; the Table 2 analogue as the summary table. Each
episode is followed by the judge (when a `judge` role is bound) and adds the leaderboard
columns to its rows (audits/episode.py); the run directory gets the privacy and audit
tables (privacy/outputs.py, audits/outputs.py).
"""

from confide.core.benchmark import BenchmarkSpec
from confide.envs.calbench.actions import CONDITIONS
from confide.envs.calbench.audits import measured, write_calbench_outputs
from confide.envs.calbench.env import load_tasks, private_markers, run_episode, seats
from confide.envs.calbench.events import EVENTS
from confide.envs.calbench.participants import REFERENCE_NAMES
from confide.envs.calbench.suites import suite_names
from confide.envs.calbench.summary import summarize

SPEC = BenchmarkSpec(
    id="calbench",
    description="N assistants with private calendars schedule a stream of meetings "
    "(success, excess cost vs a CP-SAT oracle, messages, fairness).",
    load_tasks=load_tasks,
    seats=seats,
    run_episode=measured(run_episode),
    default_suite="canonical",
    suites=suite_names(),
    references=REFERENCE_NAMES,
    default_lineup="imap",
    default_lineups=REFERENCE_NAMES,
    conditions=CONDITIONS,
    summarize=summarize,
    private_markers=private_markers,
    write_outputs=write_calbench_outputs,
    events=EVENTS,
)

__all__ = ["SPEC"]
