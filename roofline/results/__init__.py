"""The results document, defined once as typed models (pydantic): what `run` and `tune` write,
what `plot`, `show` and every table read.

  schema   the models (schema 3), their checks, and the JSON Schema other tools can read
  convert  results from a run, a sweep or a tile search; counters attached by kernel name
  store    load (schema 1 files migrate), save atomically, merge several files
"""
