"""CUDA C++ sources of the SGEMM ladder, one kernel per file (shipped as package data)."""
