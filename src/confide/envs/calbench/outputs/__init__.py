"""CalBench tables written into a run directory (the CalBench paper, Table 2, F.1-F.5, appendix G):
`table2` (the summary table), `privacy` (protocol-semantic VPS tables) and `audits`
(leaderboard columns, reflection and judge VPS, the G analyses)."""
