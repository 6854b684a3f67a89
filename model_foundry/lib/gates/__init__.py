"""Quality gates: what a model wrote, checked before it enters an export or a table.

- ``answers``: one answer's cause (``gate``), the cause of a sample or a preference pair.
- ``config``: the causes, their thresholds and where they are set (a recipe, the hygiene file).
- ``repetition``, ``schema``: the loop and structured-answer checks.
- ``verdict``: the verdict contract, what a judge answers and how it is read.

Plain code with no knowledge of its callers: the datasets, recipes and summaries import it,
never the other way round.
"""
