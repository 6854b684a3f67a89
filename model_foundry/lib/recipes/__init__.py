"""Dataset recipes: a dataset declared as columns in YAML, generated through the slots.

``columns/`` holds a class per column type (its fields, checks, reads and what it computes or
asks) and the registry that finds them; ``parse`` reads a recipe (``spec``) keeping every
problem, ``graph`` orders its columns, ``seeds`` reads its seed rows, ``generate`` makes its
cells row by row (``llm_cells`` for what an LLM cell asks) and ``cells`` keeps them in
``dataset_recipe_cells``; ``records`` and ``export`` write them out. ``collect`` is
``dataset collect``'s built-in recipe and ``collection`` one whole collection (prompts, recipe,
export). The Dagster component is ``defs/recipes``.
"""
