"""Sessions' flow: lineage graphs and their figures, their pictures, and slot routing."""
