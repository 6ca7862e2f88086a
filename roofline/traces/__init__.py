"""Traces of programs as they ran (no replay), read into kernels and collectives."""
