"""The results document, defined once as typed models (pydantic): what `run`, `tune` and
`profile` write, what `plot`, `show` and every table read.

  schema   the models (schema 3), their checks, and the JSON Schema other tools can read
  profile  a program's profile (`"kind": "profile"`): its kernels against their precision's roofs
  convert  a profile from its launches; counters attached by kernel name (a run's document: roofline.collect)
  store    load (schema 1 files migrate), save atomically, merge several files
"""
