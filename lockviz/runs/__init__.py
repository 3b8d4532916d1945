"""Runs as the app keeps them: recorded as they happen, exported, imported (their words come
from :mod:`lockviz.narrator`, the layer below).

* :mod:`~lockviz.runs.recorder` starts runs on the lab, stores each event and broadcasts it;
* :mod:`~lockviz.runs.exports` and :mod:`~lockviz.runs.imports` turn runs into files and back.
"""
