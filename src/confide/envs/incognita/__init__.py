"""Incognita: retail customer service under three access structures (the Incognita paper).

One evaluated agent resolves a customer's request while the service-side tools are held
by the agent itself (``direct``), by one declared desk (``indirect``) or by six
role-isolated desks whose capabilities must be discovered (``social``). Success is the
source benchmark's: the final database state against the replayed gold state, plus the
card's output assertions checked by a judge. See `env` for the episode and its trace
events, `conditions` for the access structures, `execution` for the execution layer,
`gate` for the disclosure gate, `transform` for the transformation of tau-bench / tau2
retail tasks into cards (checked by `conversion`), `participants` for seats and roles,
`metrics` for evaluation and per-episode measures, `outputs` for the coordination
reference, the trajectory reader, failure types and the paper's tables and figures
(written into every run directory). The native tau-bench anchor (`native`, the paper's
fourth arm) runs when named (``--condition native``, the paper's experiment file); a run
that names no condition plays the three access structures.

    confide run incognita --condition social --lineup reference
    confide run incognita --lineup openai/gpt-5-mini --role customer=openai/gpt-5-mini \\
        --role desk=openai/gpt-5-mini --role judge=openai/gpt-4.1
        # a model agent needs model desks, customer and judge
    confide run incognita --lineup mock/incognita-prose --role customer=mock/incognita \\
        --role desk=mock/incognita --role judge=mock/incognita   # the same, offline
    confide run incognita --tasks tau2/tasks.json --world retail-data/   # `transform`
"""

from confide.declaration import lazy_spec

__getattr__ = lazy_spec(__name__)
