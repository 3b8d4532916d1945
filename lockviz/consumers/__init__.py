"""The live streams, one consumer per kind: a run's events (:mod:`.runs`), a room's state and
polls (:mod:`.rooms`). Consumers stay thin: they translate WebSocket messages to calls on
lockviz.runs and lockviz.teaching, and back."""
