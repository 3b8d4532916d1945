"""What :mod:`lockviz.settings` reads besides the environment itself: numbers by their
variable's name (:mod:`~lockviz.conf.environ`) and the installation's secret key, made once and
kept outside the repository (:mod:`~lockviz.conf.secret`). Imports nothing of lockviz."""
