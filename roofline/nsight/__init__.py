"""Nsight Compute's reports in every form people have, read (pure: no GPU, no ncu). `text`: ncu's
text output. The CSV pages and the binary report are read by `measure.ncu` for now."""
