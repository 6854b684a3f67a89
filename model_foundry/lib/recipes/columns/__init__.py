"""Recipe columns, a class per type (a module each); ``registry`` finds them by type."""
