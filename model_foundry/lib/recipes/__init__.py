"""Dataset recipes: a dataset declared as columns in YAML, generated through the slots.

``spec`` reads and checks a recipe, ``seeds``/``samplers``/``templates``/``validators``
compute its plain cells, ``generate`` asks its LLM cells through ``LlmRun`` and ``cells``
keeps them in ``dataset_recipe_cells``. The Dagster component is ``defs/recipes``.
"""
