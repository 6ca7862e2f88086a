"""The results document, defined once as typed models (pydantic): what `run`, `tune` and
`profile` write, what `plot`, `show` and every table read.

  schema   the models (schema 3), their checks, and the JSON Schema other tools can read
  profile  a program's profile (`"kind": "profile"`): its kernels against their precision's roofs
  convert  results from a run, a sweep, a tile search or a profile; counters attached by kernel name
  store    load (schema 1 files migrate), save atomically, merge several files
"""
