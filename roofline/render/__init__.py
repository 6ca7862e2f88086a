"""Rendering: tables for the terminal, sentences, and charts, all from typed data (results,
occupancy, devices). Nothing here measures or models; units are converted for display only here.

  text             numbers, percentages and the verdict sentences
  tables           rich tables (run, counters, kernels, occupancy, device, tune)
  chart            the charts' shared toolkit: output checks, atomic saves, off-screen drawing, labels
  roofline_chart   the hierarchical roofline
  sweep_chart      GFLOP/s against problem size
  occupancy_chart  occupancy against registers, threads and shared memory
  compare_chart    each kernel's move between two results files (compare --chart)
  profile_chart    a program's top kernels, each against the roof of its precision
  html_report      the interactive report: roofline, table and sweep in one offline HTML file (Plotly)
  energy_chart     the energy roofline (GFLOP/J against intensity) of a run made with --energy
  grade_chart      a grade file's roofline: every graded entry with its grade
  grade_tables     a grade file's table and lines
  changes          compare's tables and the gate's lines
  comms_chart      the communication roof and each rank's step
  comms_tables     comms' tables
  trace_tables     a PyTorch profiler trace's GPU time by op (or module) and phase
  owner_tables     a profile's GPU time by op or module, each with its floor and binding roof
  owner_chart      a profile's op or module time against its floor (plot --kind op|module)
  timeline_tables  a profile's kernels over their runs: phases, the waves model's tail, the costliest phase
  timeline_chart   each kernel's trajectory on its roofline and its units' shares over time (plot --kind timeline)
  whatif           whatif's tables and chart
  project          project's tables and chart
  scene            a chart as data (points, roofs, labels), built once and drawn by the charts
  layout           label placement clear of markers and lines
  style            the one chart vocabulary: each roof's colour, each level's marker
  encoding         ASCII forms for a terminal that cannot show a name, and the streams' error handler
  lines            a view's Note and Plain lines
"""
