"""Thin views, one module per area of the app: runs (start, watch, verdict, export), and more
as the app grows (replays, lessons, comparisons). Each translates HTTP to calls on the lab and
the models, and back."""
