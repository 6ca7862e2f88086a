"""Code that runs inside a program `roofline profile` profiles, not in roofline: `sitecustomize`,
which Python loads at start-up from this folder (put first on the program's PYTHONPATH, with
ROOFLINE_OPS=1) to name, through NVTX ranges, the PyTorch op and module around every kernel launch.
It imports nothing of roofline: the program may run in another Python environment.
"""
