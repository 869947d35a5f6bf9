"""One module per view; each takes a read connection and returns plain data."""
