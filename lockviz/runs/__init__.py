"""Runs as the app keeps them: recorded as they happen, put into words, exported, imported.

* :mod:`~lockviz.runs.recorder` starts runs on the lab, stores each event and broadcasts it;
* :mod:`~lockviz.runs.narrator` puts events and verdicts into words, for every page and export;
* :mod:`~lockviz.runs.exports` and :mod:`~lockviz.runs.imports` turn runs into files and back.
"""
