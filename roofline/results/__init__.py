"""The results document, defined once as typed models (pydantic): what `run`, `tune` and
`profile` write, what `plot`, `show` and every table read.

  base     the base of every model: unknown keys kept, never mutated
  schema   the models (schema 4), their checks, and the JSON Schema other tools can read; a file
           is read from itself alone (no kernel family or measuring code is imported here)
  profile  a program's profile (`"kind": "profile"`): its kernels against their precision's roofs
  timeline a kernel's longest launch over its run, as a profile records it (PM sampling)
  sweep_point  a size sweep read at one of its sizes as a run of that size (compare, the gate)
  convert  a profile from its launches; counters attached by kernel name (a run's document: roofline.collect)
  store    load (files of schemas 1 to 3 migrate, with a note), save atomically, merge
  grades   grade files (`"kind": "grade"`): entries checked against themselves
  checks   a file checked against itself: occupancy, waves, rates, the device's peaks
"""
