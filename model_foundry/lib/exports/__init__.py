"""Writing datasets to disk: records -> a clean, versioned export folder.

- ``frame``: :func:`export_records`, the one path every export takes (spool, prepare, write).
- ``prepare``: scrub, flag, gate, cluster and split the records, spooled in two passes.
- ``hygiene``, ``spool``: the installation's scrubber, near duplicates and stored splits.
- ``published``, ``writer``: the folder's views, card and manifest, and its ``dataset_exports``
  row.
- ``layouts``: each kind of record in every view; ``card``: the dataset card.
- ``names``, ``versions``: safe folder names, and a finished version never written again.

Plain code with no knowledge of its callers: the datasets, recipes and trajectories hand it
their records, their layout and their own card sections.
"""
