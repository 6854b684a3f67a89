"""Every table's shape in one home: its DDL, its columns and its typed row (one leaf module
per table or family), the views, and the registry that creates them all in order."""
