"""Session summaries and their translations, asked of the slots through ``lib/llm``.

- ``pending``: which sessions need a (new) summary and which summaries a translation.
- ``prompts``: language detection, transcripts and the prompts (pure).
- ``chunks``: splitting a session too long for one prompt into parts that fit (pure).
- ``mapreduce``: summarising sessions of any length, in rounds of one ``LlmRun``.
- ``rows``: the summary and part rows, written with their telemetry events.
- ``translations``: the translation work kind.
"""
