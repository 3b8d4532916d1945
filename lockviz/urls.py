from django.urls import path

from lockviz.views import runs as views

urlpatterns = [
    path("", views.index, name="index"),
    path("runs/", views.start_run, name="start_run"),
    path("runs/<str:run_id>/", views.run_page, name="run"),
    path("runs/<str:run_id>/verdict/", views.verdict, name="verdict"),
    path("runs/<str:run_id>/export.json", views.export_json, name="export_json"),
]

# Lessons (walkthroughs of live runs) and side-by-side comparisons.
from lockviz.views import compare, lessons  # noqa: E402

urlpatterns += [
    path("lessons/", lessons.index, name="lessons"),
    path("lessons/<slug:slug>/", lessons.walkthrough, name="lesson"),
    path("lessons/<slug:slug>/run/", lessons.rerun, name="lesson_rerun"),
    path("compare/", compare.compare, name="compare"),
    path("compare/lanes/<str:run_id>/", compare.lane_verdict, name="compare_verdict"),
]

# Replays (time travel through a stored run), exports and imports.
from lockviz.views import imports as import_views  # noqa: E402
from lockviz.views import replay  # noqa: E402

urlpatterns += [
    path("runs/<str:run_id>/replay/", replay.replay, name="replay"),
    path("runs/<str:run_id>/export.mmd", replay.export_mermaid, name="export_mmd"),
    path("import/", import_views.import_page, name="import"),
    path("import/run/", import_views.run_imported, name="import_run"),
]

# Free play, and clicks that do things to a live run (the run page's menus, the play buttons).
from lockviz.views import play  # noqa: E402

urlpatterns += [
    path("play/", play.play, name="play"),
    path("play/<str:run_id>/", play.session, name="play_session"),
    path("runs/<str:run_id>/do", play.do, name="run_do"),
    path("runs/<str:run_id>/finish", play.finish, name="run_finish"),
    path("runs/<str:run_id>/scenario.json", play.scenario_json, name="run_scenario_json"),
    path("runs/<str:run_id>/again", play.again, name="run_again"),
]
