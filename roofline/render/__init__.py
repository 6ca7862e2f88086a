"""Rendering: tables for the terminal, sentences, and charts, all from typed data (results,
occupancy, devices). Nothing here measures or models; units are converted for display only here.

  text             numbers, percentages and the verdict sentences
  tables           rich tables (run, counters, kernels, occupancy, device, tune)
  chart            the charts' shared toolkit: output checks, atomic saves, off-screen drawing, labels
  roofline_chart   the hierarchical roofline
  sweep_chart      GFLOP/s against problem size
  occupancy_chart  occupancy against registers, threads and shared memory
  compare_chart    each kernel's move between two results files (compare --out)
  profile_chart    a program's top kernels, each against the roof of its precision
  html_report      the interactive report: roofline, table and sweep in one offline HTML file (Plotly)
"""
