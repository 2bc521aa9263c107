"""The run: claims files in, reports out (the report records and the checker)."""
