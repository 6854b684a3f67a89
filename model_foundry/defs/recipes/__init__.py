"""Dataset recipes: the ``DatasetRecipe`` component, and its instances under this folder."""
